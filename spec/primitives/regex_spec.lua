local regex = require("ascope_core").regex

describe("regex (POSIX extended)", function()
  it("matches alternatives, classes, anchors and repetitions that Lua patterns do not have", function()
    local re = assert(regex.compile("^(Ascend Hardware|NPU)/Stream [0-9]{1,3}$"))
    assert.is_true(re:find("Ascend Hardware/Stream 12"))
    assert.is_true(re:find("NPU/Stream 7"))
    assert.is_false(re:find("Ascend Hardware/Stream 1234"))
    assert.is_false(re:find("HCCL/Stream 1"))
    assert.is_false(re:find(nil))
  end)

  it("folds case with the i flag only", function()
    assert.is_true(assert(regex.compile("hcom_(send|receive)_", "i")):find("HCOM_Receive_1"))
    assert.is_false(assert(regex.compile("hcom_(send|receive)_")):find("HCOM_Receive_1"))
  end)

  it("searches the whole string, NUL bytes included", function()
    assert.is_true(assert(regex.compile("recv$")):find("a\0b recv"))
  end)

  it("returns nil and regerror's message for an invalid pattern", function()
    local re, err = regex.compile("(Stream")
    assert.is_nil(re)
    assert.truthy(err:find("(", 1, true), err) -- "Unmatched ( or \\(" from glibc
    assert.is_nil((regex.compile("a\0b")))
    assert.is_nil((regex.compile(("x"):rep(5000))))
    assert.has_error(function() regex.compile("a", "z") end)
  end)
end)
