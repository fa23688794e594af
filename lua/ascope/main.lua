local M = {}
function M.main(arg)
  print("ascope", arg[1])
  return 0
end
return M
