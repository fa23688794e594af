std = "lua54"
max_line_length = 145
files["spec/"] = { std = "+busted" }
files["rules/"] = { std = "min" }
files["lua/ascope/locale/"] = { max_line_length = false }
-- definition files for lua-language-server: stubs whose arguments only name the parameters
files["types/"] = { ignore = { "212", "241" } }
