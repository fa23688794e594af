std = "lua54"
max_line_length = 145
files["spec/"] = { std = "+busted" }
files["rules/"] = { std = "min" }
files["lua/ascope/locale/"] = { max_line_length = false }
