--- The bash completion of ascope, written from the commands' option specs (`make` builds it
-- into build/ascope.bash and `make install` puts it in share/bash-completion/completions/).
--   io.write(require("ascope.completion").bash())
-- It completes commands, options (the command's and the global ones), choices of options
-- and KEY=VALUE parameters, folders for DIR arguments and files elsewhere.
-- @module ascope.completion
local cli = require "ascope.cli"
local main = require "ascope.main"

local M = {}

-- what the value of an option completes to: a compgen argument
local function value_words(o)
  if o.choices then return "-W '" .. table.concat(o.choices, " ") .. "'" end
  if o[1] == "format" and o.default then return "-W '" .. o.default:gsub(",", " ") .. "'" end
  if o.arg == "DIR" then return "-d" end
  if o.arg == "FILE" or o.arg == "PATH" or o.arg == "CSV" then return "-f" end
  return nil -- a number, a list, a pattern: nothing to offer
end

local function flags(o)
  local f = { "--" .. o[1] }
  if o[2] then f[#f + 1] = "-" .. o[2] end
  return f
end

-- case arms for the values of options
local function value_cases(lines, options, indent)
  for _, o in ipairs(options) do
    if o.arg then
      local words = value_words(o)
      local action = words and ('COMPREPLY=($(compgen %s -- "$cur"))'):format(words) or "COMPREPLY=()"
      lines[#lines + 1] = ("%s%s) %s; return ;;"):format(indent, table.concat(flags(o), "|"), action)
    end
  end
end

local function all_flags(options)
  local list = {}
  for _, o in ipairs(options) do
    for _, f in ipairs(flags(o)) do list[#list + 1] = f end
  end
  return table.concat(list, " ")
end

--- The completion script for bash.
function M.bash()
  local names = main.command_names()
  local global_flags = all_flags(cli.globals)
  local L = {
    "# bash completion for ascope; generated from the commands' option specs by",
    "# lua/ascope/completion.lua: do not edit.",
    "_ascope() {",
    '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd="" i',
    "  # the command: the first word that is neither an option nor a global option's value",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    "    case ${COMP_WORDS[i]} in",
  }
  local with_value = {}
  for _, o in ipairs(cli.globals) do
    if o.arg then for _, f in ipairs(flags(o)) do with_value[#with_value + 1] = f end end
  end
  -- "--lang en", or "--lang = en" (bash splits words at '=')
  L[#L + 1] = ("      %s) ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++)) ;;"):format(table.concat(with_value, "|"))
  L[#L + 1] = "      -*) ;;"
  L[#L + 1] = "      *) cmd=${COMP_WORDS[i]}; break ;;"
  L[#L + 1] = "    esac"
  L[#L + 1] = "  done"
  L[#L + 1] = "  case $prev in"
  value_cases(L, cli.globals, "    ")
  L[#L + 1] = "  esac"
  L[#L + 1] = "  case $cmd in"
  L[#L + 1] = ('    "") COMPREPLY=($(compgen -W "%s %s" -- "$cur")) ;;'):format(table.concat(names, " "), global_flags)
  L[#L + 1] = ('    help) COMPREPLY=($(compgen -W "%s %s" -- "$cur")) ;;'):format(table.concat(names, " "), global_flags)
  L[#L + 1] = "    run)"
  L[#L + 1] = "      # the script; after it every word is the script's"
  L[#L + 1] = '      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "' .. global_flags .. '" -- "$cur"))'
  L[#L + 1] = '      else COMPREPLY=($(compgen -f -- "$cur")); fi ;;'
  for _, name in ipairs(names) do
    local spec = main.spec(name)
    if name ~= "help" and name ~= "run" then
      L[#L + 1] = ("    %s)"):format(name)
      L[#L + 1] = "      case $prev in"
      value_cases(L, spec.options, "        ")
      L[#L + 1] = "      esac"
      if spec.keys then
        -- bash splits KEY=VALUE at the '=': the key is two words back
        local keys, values = {}, {}
        for k, flag in pairs(spec.keys) do
          keys[#keys + 1] = k .. "="
          for _, o in ipairs(spec.options) do
            if o[1] == flag then
              local words = value_words(o)
              values[#values + 1] = ('        %s) COMPREPLY=($(compgen %s -- "$cur")); return ;;'):format(k, words or "-W ''")
            end
          end
        end
        table.sort(keys)
        table.sort(values)
        L[#L + 1] = '      if [[ $prev == = ]]; then'
        L[#L + 1] = '        case ${COMP_WORDS[COMP_CWORD-2]} in'
        for _, v in ipairs(values) do L[#L + 1] = "  " .. v end
        L[#L + 1] = '        esac'
        L[#L + 1] = '      fi'
        L[#L + 1] = ('      if [[ $cur == [A-Z]* ]]; then COMPREPLY=($(compgen -W "%s" -- "$cur")); compopt -o nospace 2>/dev/null; return; fi')
          :format(table.concat(keys, " "))
      end
      L[#L + 1] = ('      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "%s %s" -- "$cur"))'):format(all_flags(spec.options), global_flags)
      L[#L + 1] = '      else COMPREPLY=($(compgen -f -- "$cur")); fi ;;'
    end
  end
  L[#L + 1] = "  esac"
  L[#L + 1] = "}"
  L[#L + 1] = "complete -o filenames -F _ascope ascope"
  return table.concat(L, "\n") .. "\n"
end

return M
