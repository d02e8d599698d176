-- Requests that vary as production traffic does, for wrk: bench/varied.py's tokens, written again in Lua
-- (tests/test_bench_varied.py checks that both render the same requests).
--   local varied = dofile("/path/to/bench/scripts/varied.lua")
--   varied.serve("POST", "/openrtb2/auction", body_template)   -- sets wrk's request()
local M = {}

local MIXED_PAGES, NEW_PAGE_EVERY = 50, 5
local TCF_BASE = "CPXegUAPXegUAAfKABENB-EsAP_AAAAAAAYgAmAAAAAEAABAAABAAAAA"
local BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local floor = math.floor

local tokens = {}
tokens.n = function(n) return string.format("%d", n) end
tokens.ip = function(n)
  return string.format("%d.%d.%d.%d", 11 + floor(n / 16777216) % 200, floor(n / 65536) % 256,
                       floor(n / 256) % 256, n % 256)
end
tokens.page = function(n)
  if n % NEW_PAGE_EVERY == 0 then return string.format("new%d", n) end
  local repeating = n - floor(n / NEW_PAGE_EVERY)
  return string.format("p%d", (repeating * 7919) % MIXED_PAGES)
end
tokens.tcf = function(n)
  local digits, value = {}, n
  for i = 6, 1, -1 do
    local d = value % 64
    digits[i] = BASE64URL:sub(d + 1, d + 1)
    value = floor(value / 64)
  end
  return TCF_BASE:sub(1, 1) .. table.concat(digits) .. TCF_BASE:sub(8)
end
M.tokens = tokens

-- text cut at its {{token}}s: parts and token names
function M.template(text)
  local parts, names, at = {}, {}, 1
  for s, name, e in text:gmatch("(){{(%l+)}}()") do
    assert(tokens[name], "unknown token {{" .. name .. "}}")
    parts[#parts + 1] = text:sub(at, s - 1)
    names[#names + 1] = name
    at = e
  end
  parts[#parts + 1] = text:sub(at)
  return {parts = parts, names = names}
end

function M.render(template, n)
  local out, parts = {template.parts[1]}, template.parts
  for i, name in ipairs(template.names) do
    out[#out + 1] = tokens[name](n)
    out[#out + 1] = parts[i + 1]
  end
  return table.concat(out)
end

-- wrk's request(): request n (from 1) of method, path and body templates
function M.serve(method, path, body)
  local path_t = M.template(path)
  local body_t = body and M.template(body) or nil
  local n = 0
  request = function()
    n = n + 1
    return wrk.format(method, M.render(path_t, n), nil, body_t and M.render(body_t, n) or nil)
  end
end

return M
