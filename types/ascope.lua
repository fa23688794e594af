---@meta ascope
-- lua-language-server definitions of require "ascope" and its six jobs. Definitions only.
-- Point the editor at this folder: .luarc.json {"workspace.library": ["<ascope>/types"]}.

---@class ascope: ascope_core
---@field VERSION string the version of ascope
---@field memory ascope.memory
---@field timeline ascope.timeline
---@field rules ascope.rules
---@field log ascope.log
---@field workers ascope.workers
local ascope = {}

---@class ascope.log
local log = {}
---Where the library's stage lines, warnings and progress go; nil (the default): nowhere.
---@alias ascope.log.sink {on_log: fun(level: string, text: string), on_progress: fun(label: string, done: integer, total: integer, s: number)}
---@param sink? ascope.log.sink level is "stage", "warning" or "error"
function log.set_sink(sink) end
---The sink in use, or nil.
---@return table|nil
function log.sink() end

---@class ascope.workers
---@field default integer|nil worker processes (forked) a job uses when not given jobs; 1 embedded, nil = CPUs
local workers = {}
---The number of workers for a job given its jobs option.
---@param jobs? integer
---@return integer
function workers.count(jobs) end

---@class ascope.rules
local rules = {}
---Load the bundled rule file NAME (rules/NAME.lua), merged with a user file.
---@param name string
---@param user_file? string
---@return table|nil rules, table? err a usage error value that prints as the message naming file, rule and key
function rules.load(name, user_file) end
---Use DIR (an edited copy of rules/) instead of the bundled rules.
---@param dir string
function rules.set_dir(dir) end

-- memory ---------------------------------------------------------------------------------

---@class ascope.MemoryOptions
---@field input? string the profiling tree (run(opts)); run(input, opts) also works
---@field match? "latest"|"within"|"within-or-latest" how an allocation finds its operator (default from rules: latest)
---@field rank_list? string|table<integer, true> "all", "0,2,4-7" or a set of ranks
---@field role? string[] only these roles (`roles` is read too)
---@field jobs? integer ranks read in parallel (default: CPUs)
---@field rules? string a rule file merged over rules/memory.lua

---One row of memory_events.csv.
---@class ascope.MemoryRow
---@field name string
---@field role string
---@field rank_id integer
---@field call_stack string
---@field call_stack_top string
---@field size_kb number
---@field start_ns integer
---@field duration_ns integer|nil nil: never released
---@field start_time_ms string exact decimal
---@field duration_ms string
---@field total_allocated_mb number
---@field total_reserved_mb number
---@field total_active_mb number
---@field device_type string

---@class ascope.MemoryRank
---@field rank integer
---@field role string
---@field columns table<string, ascope.Column>
---@field summary table peak, live at peak, top call sites, never released (as memory_summary.json)

---@class ascope.MemoryResult
---@field ranks ascope.MemoryRank[]
---@field failed {role: string, rank: integer, dirs: string[], reason: string}[]
---@field unreadable {path: string, message: string}[] failed and partial ranks
---@field problems table[] the output checks of rules/memory.lua
local MemoryResult = {}
---Every event of every rank in output order (start time, then rank, then file order).
---@return fun(): ascope.MemoryRow?
function MemoryResult:rows() end

---@class ascope.WriteOptions
---@field formats? string[]|string the outputs to write (default: the command's --format default)
---@field layout? string a layout file for the HTML report
---@field jobs? integer files written in parallel worker processes (default 1)

---@class ascope.memory
---@field spec table the option spec (command line, help, man page)
local memory = {}
---Read a profiling tree and attribute every allocation; prints and writes nothing.
---@param opts ascope.MemoryOptions|string options with `input`, or the input (then opts second)
---@param legacy? ascope.MemoryOptions
---@return ascope.MemoryResult|nil result, string? message, string? kind "usage" when an option is wrong
function memory.run(opts, legacy) end
---memory.run(input, opts), under its earlier name.
---@param input string a tree, one *_ascend_pt folder or an ASCEND_PROFILER_OUTPUT folder
---@param opts? ascope.MemoryOptions
---@return ascope.MemoryResult|nil result, string? message
function memory.parse(input, opts) end
---Write memory_events.csv, memory_summary.json, memory_report.md, memory_report.html, memory_trace.json.
---@param result ascope.MemoryResult
---@param outdir string
---@param opts? ascope.WriteOptions formats: csv, json, md, html, trace
---@return true|nil ok, string[]|string paths_or_message
function memory.write(result, outdir, opts) end
---@param result ascope.MemoryResult
---@return {severity: string, rank: integer?, analysis: string, message: string}[]
function memory.anomalies(result) end

-- timeline -------------------------------------------------------------------------------

---@class ascope.TimelineOptions
---@field input? string the trace, .db, step_trace_time.csv or tree (run(opts)); run(input, opts) also works
---@field rank_list? string|table<integer, true>
---@field jobs? integer
---@field rules? string
---@field step? integer the step to analyse (default: the median one)
---@field pp? integer pipeline stages
---@field microbatches? integer
---@field top? integer rows in the ranked tables (`top_n` is read too)
---@field device_regex? string
---@field comm_regex? string
---@field step_trace? string step_trace_time.csv

---@class ascope.Finding
---@field id string
---@field severity "info"|"warning"|"error"
---@field metric string
---@field value number
---@field finding string
---@field action string

---@class ascope.TimelineRank
---@field rank integer
---@field role string
---@field critical_path table
---@field overlap table
---@field op_util table
---@field lanes table[]
---@field jitter table
---@field dashboard table<string, number> e.g. op_utilization, critical_path_ratio
---@field findings ascope.Finding[]
---@field not_computed table<string, string> dimension -> why

---@class ascope.TimelineResult
---@field ranks ascope.TimelineRank[]
---@field failed {rank: integer?, reason: string}[]
---@field unreadable {path: string, message: string}[]
---@field rules table

---@class ascope.timeline
---@field spec table the option spec (command line, help, man page)
local timeline = {}
---Analyse every rank; prints and writes nothing.
---@param opts ascope.TimelineOptions|string options with `input`, or the input (then opts second)
---@param legacy? ascope.TimelineOptions
---@return ascope.TimelineResult|nil result, string? message, string? kind "usage" when an option is wrong
function timeline.run(opts, legacy) end
---Write timeline_metrics.json, timeline_report.md, timeline_report.html.
---@param result ascope.TimelineResult
---@param outdir string
---@param opts? ascope.WriteOptions formats: json, md, html
---@return true|nil ok, string[]|string paths_or_message
function timeline.write(result, outdir, opts) end
---@param result ascope.TimelineResult
---@return ascope.Finding[]
function timeline.anomalies(result) end

-- moe, plog, graph, opjitter: recipes --------------------------------------------------------

---@class ascope.Anomaly
---@field severity "ERROR"|"WARNING"|"INFO"|"DETAIL"
---@field card? integer
---@field analysis string
---@field message string

---@class ascope.Unreadable an input that could not be read
---@field path? string
---@field card? integer
---@field message string

---@class ascope.WriteOptions
---@field formats? string[] the outputs to write ("csv", "json", "html"); default: the command's --format default
---@field encoding? "utf8"|"gbk" moe's CSV files

---@class ascope.MoeOptions
---@field target_dir string folder of the card folders <n>/
---@field soc_version "910_93"|"950"|"910B"
---@field share_expert_card_count? integer
---@field sp_moe_num? integer
---@field tp_worldsize? integer
---@field share_expert_num? integer
---@field start_a2_cluster? "0"|"1" merge the machines' moe_summary.json files
---@field k? integer
---@field rules? string
---@field jobs? integer cards read at once in worker processes
---@field log? fun(level: "INFO"|"WARNING"|"ERROR"|"DETAIL", text: string)

---@class ascope.MoeCard
---@field card integer
---@field dir string
---@field stuck_in? "dispatch"|"combine"
---@field anomalies ascope.Anomaly[]

---@class ascope.MoeResult
---@field cards ascope.MoeCard[]
---@field failed table[]
---@field unreadable ascope.Unreadable[]
---@field cross table wait_for, root_cards, the cross-card checks

---@class ascope.moe
---@field spec table the option spec
local moe = {}
---@param opts ascope.MoeOptions|string the options, or TARGET_DIR in the form run(path, opts)
---@param more? ascope.MoeOptions
---@return ascope.MoeResult|nil result, string? message
function moe.run(opts, more) end
---@param res ascope.MoeResult
---@param outdir string
---@param wopts? ascope.WriteOptions
---@return boolean|nil ok, string? message
function moe.write(res, outdir, wopts) end
---@param res ascope.MoeResult
---@return ascope.Anomaly[]
function moe.anomalies(res) end

---@class ascope.PlogResult
---@field categories table<string, {count: integer, title: string|table, examples: table[]}>
---@field records? userdata the rows of error_plog.csv, in a spool until write
---@field failures table[] each card's failing kernel and op
---@field non_moe_failures table[]
---@field files string[]
---@field failed table[]
---@field unreadable ascope.Unreadable[]

---@class ascope.plog
---@field spec table the option spec
local plog = {}
---@param opts {input: string, rules?: string, format?: string}|string the options, or the path in the form run(path, opts)
---@param more? {rules?: string, format?: string}
---@return ascope.PlogResult|nil result, string? message
function plog.run(opts, more) end
---@param res ascope.PlogResult
---@param outdir string
---@param wopts? ascope.WriteOptions
---@return boolean|nil ok, string? message
function plog.write(res, outdir, wopts) end
---@param res ascope.PlogResult
---@return ascope.Anomaly[]
function plog.anomalies(res) end

---@class ascope.GraphPair
---@field a integer
---@field b integer
---@field verdict "identical"|"order"|"count"
---@field first_divergence? integer 0-based
---@field counts? table<string, {[1]: integer, [2]: integer}>

---@class ascope.GraphResult
---@field input string
---@field cards integer[]
---@field graphs table<integer, {nodes: string[], files: string[]}>
---@field pairs ascope.GraphPair[]
---@field failed table[]
---@field unreadable ascope.Unreadable[]

---@class ascope.graph
---@field spec table the option spec
local graph = {}
---@param opts {input: string, rules?: string, filter?: string, output?: string}|string
---@param more? {rules?: string, filter?: string, output?: string}
---@return ascope.GraphResult|nil result, string? message
function graph.run(opts, more) end
---@param res ascope.GraphResult
---@param outdir string
---@param wopts? ascope.WriteOptions
---@return boolean|nil ok, string? message
function graph.write(res, outdir, wopts) end
---@param res ascope.GraphResult
---@return ascope.Anomaly[]
function graph.anomalies(res) end

---@class ascope.OpjitterResult
---@field input string
---@field cards table
---@field found table[]
---@field missing integer[]
---@field rows table[] per operator type and call: max, min, jitter, values per card
---@field avg {type: string, avg_jitter: number}[]
---@field aiv table[]
---@field failed table[]
---@field unreadable ascope.Unreadable[]

---@class ascope.opjitter
---@field spec table the option spec
local opjitter = {}
---@param opts {input: string, rules?: string, cards?: integer, jobs?: integer}|string
---@param more? {rules?: string, cards?: integer, jobs?: integer}
---@return ascope.OpjitterResult|nil result, string? message
function opjitter.run(opts, more) end
---@param res ascope.OpjitterResult
---@param outdir string
---@param wopts? ascope.WriteOptions
---@return boolean|nil ok, string? message
function opjitter.write(res, outdir, wopts) end
---@param res ascope.OpjitterResult
---@return ascope.Anomaly[]
function opjitter.anomalies(res) end

return ascope
