-- iconv.convert: text re-encoding in memory (the GBK CSVs of ascope moe).
local core = require "ascope_core"

describe("iconv.convert", function()
  local iconv = core.iconv

  it("gives the GBK bytes of known Chinese text", function()
    -- GB 2312 code points of 中 (D6D0), 文 (CEC4), 卡 (BFA8), 死 (CBC0), 区 (C7F8); ASCII unchanged
    assert.equal("\214\208\206\196 \191\168\203\192 win\199\248", iconv.convert("中文 卡死 win区", "UTF-8", "GBK"))
    assert.equal("中文", iconv.convert("\214\208\206\196", "GBK", "UTF-8"))
    assert.equal("", iconv.convert("", "UTF-8", "GBK"))
    local long = ("中"):rep(50000)
    assert.equal(("\214\208"):rep(50000), iconv.convert(long, "UTF-8", "GBK"))
  end)

  it("names the byte where the text cannot be converted", function()
    local s, err = iconv.convert("ab\255cd", "UTF-8", "GBK", "x.csv")
    assert.is_nil(s)
    assert.equal("x.csv (byte 2): a character with no GBK form (or not valid UTF-8)", err)
    s, err = iconv.convert("a\228\184", "UTF-8", "GBK", "x.csv")
    assert.is_nil(s)
    assert.equal("x.csv (byte 1): the text ends inside a UTF-8 character", err)
    s, err = iconv.convert("a", "UTF-8", "NO-SUCH-ENCODING")
    assert.is_nil(s)
    assert.truthy(err:find("cannot convert from UTF-8 to NO-SUCH-ENCODING", 1, true))
  end)
end)
