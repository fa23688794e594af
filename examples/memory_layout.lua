-- A layout for `ascope memory ... --layout examples/memory_layout.lua`: show the leak suspects
-- first, retitle them, keep only allocated memory over time, and drop the live-at-peak bars.
return {
  order = { "leaks", "overview", "over_time", "sites" },
  sections = {
    { id = "leaks", title = { en = "Memory never given back", zh = "从未释放的内存" }, top = 30 },
    { id = "over_time", series = { "allocated" } },
    { id = "live", disabled = true },
  },
}
