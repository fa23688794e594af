-- Values that are data and words at once (labels.lua): the JSON a script reads keeps the same
-- English value in every language, the Markdown and HTML a person reads show the catalogue's
-- text, Chinese under --lang zh.
local h = require "helper"
local gen = require "timeline_gen"
local labels = require "ascope.labels"
local i18n = require "ascope.i18n"

local function count(text, s)
  local n, at = 0, 1
  while true do
    local i, j = text:find(s, at, true)
    if not i then return n end
    n, at = n + 1, j + 1
  end
end

describe("labels that are data values", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function()
    i18n.set("en")
    h.cleanup(dir)
  end)

  it("show the value itself in English and a Chinese text under zh, each its own", function()
    local cases = { call_site = { labels.NO_STACK }, source = { labels.MARKERS, labels.TASKS },
                    comm_column = { labels.TRACE_COMM }, method = { labels.REQUESTS, labels.NAME_PATTERNS } }
    local seen = {}
    for kind, values in pairs(cases) do
      for _, v in ipairs(values) do
        i18n.set("en")
        assert.equal(v, labels.show(kind, v))
        i18n.set("zh")
        local zh = labels.show(kind, v)
        assert.truthy(zh:find("[\228-\233]"), zh)
        assert.is_nil(seen[zh], zh)
        seen[zh] = true
      end
    end
    -- a value that is not a label (a file name, a lane from the data) is shown as it is
    assert.equal("step_trace_time.csv", labels.show("source", "step_trace_time.csv"))
    assert.equal("tasks", labels.show("call_site", "tasks"))
  end)

  it("keep the timeline JSON's values and translate the report's", function()
    gen.healthy(dir .. "/healthy.json", 6)
    local host = { { "request_1", 0, 1000 }, { "request_2", 2000, 600 } }
    local dev = { { "prefill_attn", 10, 290, "AI_CORE" }, { "decode_step", 400, 100, "AI_CORE" },
                  { "prefill_attn", 2000, 250, "AI_CORE" }, { "decode_step", 2300, 100, "AI_CORE" } }
    gen.write(dir .. "/serve.json", { { "Python", "Thread 1", host }, { "Ascend Hardware", "Stream 1", dev } })
    gen.write(dir .. "/plain.json", { { "Ascend Hardware", "Stream 1", dev } })
    local function run(name, lang)
      local out = ("%s/%s_%s"):format(dir, name, lang)
      assert.equal(0, (h.run("--lang", lang, "timeline", dir .. "/" .. name .. ".json", "-o", out, "-q",
        "--format", "md,json,html")))
      return h.read(out .. "/timeline_report.md"), h.read(out .. "/timeline_metrics.json"),
        h.read(out .. "/timeline_report.html")
    end
    local md, js, page = run("healthy", "zh")
    assert.truthy(md:find("（来源 ProfilerStep 标记）", 1, true))
    assert.truthy(md:find("来源 设备任务：通信", 1, true))
    assert.truthy(md:find("每个 step 的通信（trace 中的通信忙碌时间）", 1, true))
    assert.truthy(page:find("trace 中的通信忙碌时间", 1, true))
    for _, english in ipairs({ "ProfilerStep markers", "from tasks", "communication busy time" }) do
      assert.falsy(md:find(english, 1, true), english)
      assert.falsy(page:find(english, 1, true), english)
    end
    assert.equal(2, count(js, '"source": "ProfilerStep markers"'))
    assert.equal(4, count(js, '"source": "tasks"'))
    assert.equal(2, count(js, '"column": "communication busy time in the trace"'))
    local en_md, en_js = run("healthy", "en")
    -- (the JSON's reasons and findings are sentences, in the language asked for; these are not)
    assert.equal(2, count(en_js, '"source": "ProfilerStep markers"'))
    assert.equal(4, count(en_js, '"source": "tasks"'))
    assert.truthy(en_md:find("6 steps from ProfilerStep markers:", 1, true))
    assert.truthy(en_md:find("From tasks: communication", 1, true))

    md, js = run("serve", "zh")
    assert.truthy(md:find("ms（按请求边界）。", 1, true))
    assert.equal(2, count(js, '"method": "request boundaries"'))
    md, js = run("plain", "zh")
    assert.truthy(md:find("（名称模式近似）", 1, true))
    assert.equal(2, count(js, '"method": "name-pattern approximation"'))
    assert.truthy(run("plain", "en"):find("(name-pattern approximation).", 1, true))
  end)

  it("keep '(no call stack)' in the memory summary and trace and translate the reports'", function()
    local pt = dir .. "/in/actor_update/20260101_120000_ascend_pt"
    h.write(pt .. "/profiler_info_0.json", '{"rank_id": 0}')
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json",
      '[{"ph": "X", "cat": "python_function", "name": "aten::unknown", "ts": "5999999.0", "dur": 5}]')
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
      h.MEMORY_CSV_HEADER .. "aten::unknown,512,6000000,,,,,16.5,20,16.5,,,,1,NPU:0\n")
    for _, lang in ipairs({ "zh", "en" }) do
      local out = dir .. "/out_" .. lang
      assert.equal(0, (h.run("--lang", lang, "memory", dir .. "/in", "-o", out, "-q")))
      local md, page = h.read(out .. "/memory_report.md"), h.read(out .. "/memory_report.html")
      local shown = lang == "zh" and "（无调用栈）" or "(no call stack)"
      -- the top call sites, the leak suspects and what is alive at the peak: one keyless site each
      assert.equal(3, count(md, "| " .. shown .. " |"))
      assert.truthy(count(page, shown) >= 3)
      if lang == "zh" then
        assert.equal(0, count(md, "(no call stack)"))
        assert.equal(0, count(page, "(no call stack)"))
      end
      assert.equal(5, count(h.read(out .. "/memory_summary.json"), '"call_site": "(no call stack)"'))
      assert.equal(1, count(h.read(out .. "/memory_trace.json"), '"0":{"name":"(no call stack)"}'))
    end
  end)
end)
