-- luaunit.lua — crucible's own stand-in for the part of LuaUnit (a Lua test library that
-- SandboxFusion installs with luarocks, not packaged in Debian 12) that MultiPL-E's Lua tests
-- use: lu.assertEquals (deep equality of tables), assertTrue/assertFalse, and
-- lu.LuaUnit.run(), which runs every global function whose name starts with "test" (any
-- case) and returns how many failed or raised: the tests end with os.exit(lu.LuaUnit.run()).
-- The lua row writes it to /tmp/crucible-lua/ and puts that last on the module path: a
-- luaunit.lua of the program's own comes first.
local M = {}

local function equal(a, b, seen)
  if a == b then return true end
  if type(a) ~= 'table' or type(b) ~= 'table' then return false end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in pairs(a) do
    if not equal(v, b[k], seen) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local function show(v, depth)
  depth = depth or 0
  if type(v) == 'string' then return string.format('%q', v) end
  if type(v) ~= 'table' then return tostring(v) end
  if depth > 5 then return '{...}' end
  local parts, n = {}, #v
  for i = 1, n do parts[#parts + 1] = show(v[i], depth + 1) end
  for k, x in pairs(v) do
    if type(k) ~= 'number' or k < 1 or k > n or k % 1 ~= 0 then
      parts[#parts + 1] = '[' .. show(k, depth + 1) .. ']=' .. show(x, depth + 1)
    end
  end
  return '{' .. table.concat(parts, ', ') .. '}'
end

local failure = {}

function M.assertEquals(actual, expected)
  if not equal(actual, expected) then
    error(setmetatable({msg = 'expected: ' .. show(expected) .. '\nactual: ' .. show(actual)},
                       failure), 2)
  end
end
M.assert_equals = M.assertEquals

function M.assertTrue(v)
  if v ~= true then error(setmetatable({msg = 'expected: true, actual: ' .. show(v)}, failure), 2) end
end

function M.assertFalse(v)
  if v ~= false then error(setmetatable({msg = 'expected: false, actual: ' .. show(v)}, failure), 2) end
end

M.LuaUnit = {}

function M.LuaUnit.run()
  local names = {}
  for name, f in pairs(_G) do
    if type(name) == 'string' and type(f) == 'function' and name:lower():sub(1, 4) == 'test' then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  local bad = 0
  for _, name in ipairs(names) do
    local ok, err = xpcall(_G[name], function(e)
      if getmetatable(e) == failure then return e end
      return debug.traceback(tostring(e), 2)
    end)
    if not ok then
      bad = bad + 1
      local what = getmetatable(err) == failure and 'FAIL' or 'ERROR'
      io.stdout:write(what .. ': ' .. name .. '\n' .. tostring(getmetatable(err) == failure and err.msg or err) .. '\n')
    end
  end
  io.stdout:write(string.format('Ran %d tests, %d successes, %d failures\n%s\n', #names,
                                #names - bad, bad, bad == 0 and 'OK' or 'FAILED'))
  return bad
end

return M
