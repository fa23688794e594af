-- fmt.label: report labels capped in bytes on a character boundary.
local fmt = require "ascope.fmt"

describe("fmt.label", function()
  it("keeps a short label as it is and cuts a long one with an ellipsis", function()
    assert.equal("a.py(1): f", fmt.label("a.py(1): f"))
    assert.is_nil(fmt.label(nil))
    assert.equal(("x"):rep(1000), fmt.label(("x"):rep(1000)))
    assert.equal(("x"):rep(1000) .. "…", fmt.label(("x"):rep(100 * 1000 * 1000)))
    assert.equal("abc…", fmt.label("abcdef", 3))
  end)

  it("never cuts a multibyte character in two", function()
    -- 中 is three bytes: a cut at 4 or 5 bytes keeps one whole character
    assert.equal("中…", fmt.label("中文字", 4))
    assert.equal("中…", fmt.label("中文字", 5))
    assert.equal("中文…", fmt.label("中文字", 6))
    assert.equal("…", fmt.label("中文", 2))
    assert.equal("\xf0\x9f\x98\x80…", fmt.label("\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 7)) -- four bytes
  end)

  it("cuts text in another encoding where it is, not back to its start", function()
    local gbk = "EE1001 " .. ("\xb0\xa1"):rep(1500) -- 啊 in GBK: both bytes look like UTF-8 continuations
    local label = fmt.label(gbk)
    assert.equal(1000 + #"…", #label)
    assert.equal(gbk:sub(1, 1000), label:sub(1, 1000))
  end)
end)
