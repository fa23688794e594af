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
  end)
end)
