---@meta ascope_core
-- lua-language-server definitions of the C primitives (module ascope_core, also reached as
-- require("ascope").json and so on). Definitions only: nothing here runs.
-- A function that returns `nil, message` on failure returns a third value too: the message's
-- template (for example "the file is empty (no header line)"), a name that does not change with
-- the language of the message, for code that tells one error from another.

---A typed column: a C array behind a userdata. Integer columns hold int64 (times in ns),
---string columns interned strings; a missing value reads as nil.
---@class ascope.Column
---@operator len: integer
---@field [integer] integer|number|string|nil
local Column = {}
---@return "integer"|"number"|"string"
function Column:kind() end
---@param i integer
---@return integer|number|string|nil
function Column:get(i) end
---@return (integer|number|string|false)[]
function Column:totable() end
---Count of the non-null values, their sum, least and greatest (nil, nil when none).
---@return integer count
---@return number sum
---@return number? min
---@return number? max
function Column:stats() end
---Stable sort order: a column of 1-based rows.
---@return ascope.Column
function Column:order() end
---@param rows ascope.Column|integer[]
---@return ascope.Column
function Column:take(rows) end
---The interned id of row i of a string column.
---@param i integer
---@return integer
function Column:id(i) end
---The row of the largest value among rows, skipping the rows where present has no value. Of
---equal values, the row with the smallest earliest value (one without comes after), else the
---first in the order of rows.
---@param rows? ascope.Column
---@param present? ascope.Column
---@param earliest? ascope.Column
---@return integer? row, number? value
function Column:argmax(rows, present, earliest) end

---@class ascope.ColumnModule
local column = {}
---@param kind "integer"|"number"|"string"
---@param values? any[]
---@return ascope.Column
function column.new(kind, values) end
---@param columns ascope.Column[]
---@return ascope.Column
function column.concat(columns) end
---@param kind "integer"|"number"|"string"
---@param value any
---@param n integer
---@return ascope.Column
function column.fill(kind, value, n) end
---Rows whose [start, start + duration) meets [lo, hi) (no duration: the instant at the start).
---@param starts ascope.Column
---@param durations ascope.Column
---@param lo integer
---@param hi integer
---@return ascope.Column rows 1-based, in row order
function column.rows_overlapping(starts, durations, lo, hi) end
---Rows (of `rows`, in its order, when given) whose start is in [lo, hi) and whose duration is known.
---@param starts ascope.Column
---@param durations ascope.Column
---@param lo integer
---@param hi integer
---@param rows? ascope.Column|integer[]
---@return ascope.Column rows 1-based
function column.rows_starting(starts, durations, lo, hi, rows) end

---The type a field is read as; "us" turns microseconds (an exact decimal) into integer ns.
---@alias ascope.FieldType "string"|"integer"|"number"|"us"

---Options of json.scan.
---@class ascope.ScanOptions
---@field fields table<string, ascope.FieldType> fields to keep ("args.X" reaches one level into args)
---@field where? table<string, string|number|boolean|(string|number)[]> equal, in a set, true: present, false: absent
---@field meta? boolean capture ph:"M" process and thread names (default true)
---@field partial? boolean keep the rows read before an error, returned with the message
---@field progress? fun(done: integer, total: integer)
---@field threads? integer threads for one file (default: the CPUs this process may use that are idle now)
---@field min_range? integer bytes a thread at least (default 8 MiB; smaller files are read by one thread)
---@field split_at? integer[] tests: the byte offsets where the ranges after the first start

---What json.scan returns.
---@class ascope.ScanResult
---@field n integer rows kept
---@field events integer events seen
---@field bytes integer bytes read
---@field ranges integer pieces read by threads and joined (1: one thread)
---@field columns table<string, ascope.Column> one column per field
---@field meta {processes: table<string, string>, threads: table<string, string>}
---@field warning? string
---@field partial? boolean

---@class ascope.Json
---@field null any the JSON null of decode and encode
local json = {}
---@param path string
---@param opts ascope.ScanOptions
---@return ascope.ScanResult|nil result, string? message "file:line:col (byte N): ..."
function json.scan(path, opts) end
---@param text string
---@return any|nil value, string? message
function json.decode(text) end
---@param path string
---@return any|nil value, string? message
function json.load(path) end
---Checks that the blocks a reader reads, in order, make one JSON document (yajl, streamed).
---@class ascope.JsonChecker
local JsonChecker = {}
---@param block string the next bytes of the file
---@return true|nil ok, string? message "file:line:col (byte N): invalid JSON ..."
function JsonChecker:feed(block) end
---@return true|nil ok, string? message "file:line:col (byte N): invalid JSON (the file ends early ..."
function JsonChecker:finish() end
---@param path string the file, for the messages
---@return ascope.JsonChecker
function json.checker(path) end
---@param value any
---@param opts? {indent?: integer}
---@return string
function json.encode(value, opts) end

---Options of csv.read: columns by header name; a type starting with "?" is optional.
---@class ascope.CsvOptions
---@field columns table<string, string> e.g. {["Duration(us)"] = "number", ["X"] = "?string"}
---@field bad? "error"|"null" a cell that is not a number: an error (default) or nil, counted
---@field progress? fun(done: integer, total: integer)
---@field beside? fun() run here while the file is read on a thread (no progress then); its error is raised after the read

---@class ascope.CsvResult
---@field n integer
---@field columns table<string, ascope.Column>
---@field present table<string, boolean> optional columns found
---@field bad_cells? integer
---@field first_bad? string
---@field ragged_rows integer rows with another number of fields than the header (read: missing cells nil)
---@field first_ragged? string where the first of them is

---@class ascope.CsvRecords
local CsvRecords = {}
---@return string[]|nil record
function CsvRecords:next() end
function CsvRecords:close() end

---@class ascope.CsvWriter
local CsvWriter = {}
---@param ... any one value per cell, or one list
function CsvWriter:row(...) end
---@return boolean|nil ok, string? message
function CsvWriter:close() end

---@class ascope.Csv
local csv = {}
---@param path string
---@param opts ascope.CsvOptions
---@return ascope.CsvResult|nil result, string? message "file:line:column: ..."
function csv.read(path, opts) end
---@param path string
---@return ascope.CsvRecords|nil records, string? message
function csv.open(path) end
---@param path string
---@param opts? {bom?: boolean}
---@return ascope.CsvWriter|nil writer, string? message
function csv.writer(path, opts) end

---A set of disjoint int64 intervals [start, end), sorted.
---@class ascope.IntervalSet
---@operator len: integer
local IntervalSet = {}
---@param other ascope.IntervalSet
---@return ascope.IntervalSet
function IntervalSet:union(other) end
---@param other ascope.IntervalSet
---@return ascope.IntervalSet
function IntervalSet:intersect(other) end
---@param other ascope.IntervalSet
---@return ascope.IntervalSet
function IntervalSet:subtract(other) end
---The uncovered stretches of [lo, hi).
---@param lo integer
---@param hi integer
---@return ascope.IntervalSet
function IntervalSet:gaps(lo, hi) end
---@param lo integer
---@param hi integer
---@return ascope.IntervalSet
function IntervalSet:clip(lo, hi) end
---@return integer
function IntervalSet:total() end
---@param i integer
---@return integer start, integer stop
function IntervalSet:get(i) end
---@return integer? first_start, integer? last_end
function IntervalSet:bounds() end
---Statistics of the interval lengths.
---@return {count: integer, total: integer, max: integer, p50: number, p95: number, mean: number}
function IntervalSet:stats() end
---@param p number 0..100
---@return number
function IntervalSet:percentile(p) end
---@return ascope.Column starts, ascope.Column ends
function IntervalSet:columns() end

---@class ascope.Interval
local interval = {}
---@param starts ascope.Column|integer[]
---@param ends ascope.Column|integer[]
---@param rows? ascope.Column|integer[]
---@param lo? integer with hi: the union clipped to [lo, hi), built without the intervals outside it
---@param hi? integer
---@return ascope.IntervalSet
function interval.union(starts, ends, rows, lo, hi) end
---@param starts ascope.Column|integer[]
---@param durations ascope.Column|integer[]
---@param rows? ascope.Column|integer[]
---@param lo? integer with hi: the union clipped to [lo, hi), built without the intervals outside it
---@param hi? integer
---@return ascope.IntervalSet
function interval.from_durations(starts, durations, rows, lo, hi) end
---The longest dependency path through the tasks at `rows` (lane order and the flows
---producers[k] -> consumers[k]), each task adding the part of its interval, clipped to
---[lo, hi], after its predecessor's reach. A predecessor comes earlier in (start, end, row)
---order: of two tasks that start together, the one over first. nil when no task is timed.
---@param starts ascope.Column|integer[]
---@param durations ascope.Column|integer[]
---@param lanes ascope.Column|integer[]
---@param rows ascope.Column|integer[] 1-based
---@param producers ascope.Column|integer[]
---@param consumers ascope.Column|integer[]
---@param lo integer
---@param hi integer
---@return integer? length, integer[] path rows, the last task first, integer nodes, integer[] gains beside the path
function interval.longest_path(starts, durations, lanes, rows, producers, consumers, lo, hi) end

---A grouped, sorted index: key -> sorted start times.
---@class ascope.MatchIndex
local MatchIndex = {}
---For each query, the row of the same key with the latest start <= t (nil when none).
---@param keys ascope.Column
---@param times ascope.Column
---@return ascope.Column rows
function MatchIndex:latest(keys, times) end
---For each query, the row of the same key whose [start, start + duration] holds t.
---@param keys ascope.Column
---@param times ascope.Column
---@return ascope.Column rows
function MatchIndex:within(keys, times) end
---Within where an operator was still running at t, else latest; then how many rows that changes
---against latest, then latest's own results: one search a row gives both.
---@param keys ascope.Column
---@param times ascope.Column
---@return ascope.Column rows
---@return integer matched
---@return integer ended matches whose operator had ended before t
---@return integer changed rows whose answer differs from latest's
---@return ascope.Column latest_rows
---@return integer latest_matched
---@return integer latest_ended
function MatchIndex:within_or_latest(keys, times) end

---@class ascope.Match
local match = {}
---@param keys ascope.Column
---@param starts ascope.Column
---@param durations? ascope.Column
---@return ascope.MatchIndex
function match.index(keys, starts, durations) end
---What match.index(keys, starts, durations):within(qkeys, qtimes) gives, without the index: one
---pass over the slices, memory for the queries only (for a few queries among many rows).
---Keys are integers.
---@param keys ascope.Column|integer[]
---@param starts ascope.Column|integer[]
---@param durations ascope.Column|integer[]
---@param qkeys ascope.Column|integer[]
---@param qtimes ascope.Column|integer[]
---@return ascope.Column rows, integer matched
function match.within(keys, starts, durations, qkeys, qtimes) end
---For each query key, the 1-based place of the last of keys equal to it (a flow end's start:
---the last start with its id). Two string columns or two integer columns; a missing key is
---never found.
---@param keys ascope.Column
---@param qkeys ascope.Column
---@return ascope.Column places, integer found
function match.last(keys, qkeys) end

---@alias ascope.Scalar "i8"|"u8"|"i16"|"u16"|"i32"|"u32"|"i64"|"u64"|"f32"|"f64"

---A struct layout: {size = bytes, fields = {name = {offset, type [, count]}}}.
---@class ascope.Layout
---@field size integer
---@field fields table<string, {[1]: integer, [2]: ascope.Scalar, [3]: integer?}>

---A read-only view of bytes (a mapped file or part of one).
---@class ascope.BinView
---@operator len: integer
local BinView = {}
---@param off integer
---@param len? integer
---@return ascope.BinView
function BinView:sub(off, len) end
---@param n integer
---@return ascope.BinView
function BinView:tail(n) end
---@param type ascope.Scalar
---@param off integer
---@return integer|number
function BinView:read(type, off) end
---@param type ascope.Scalar
---@param off integer
---@param count integer
---@param stride? integer bytes between elements
---@return ascope.Column
function BinView:array(type, off, count, stride) end
---@param off integer
---@param layout ascope.Layout
---@return table
function BinView:struct(off, layout) end
---@param off integer
---@param count integer
---@param layout ascope.Layout
---@return table[]
function BinView:structs(off, count, layout) end
---Decode protobuf wire format by a schema; raises on malformed bytes.
---@param schema table
---@param off? integer
---@param len? integer
---@return table
function BinView:protobuf(schema, off, len) end
---@return {descr: string, shape: integer[], fortran: boolean, count: integer, data: ascope.Column}|nil, string?
function BinView:npy() end

---@class ascope.Bin
local bin = {}
---@param path string
---@return ascope.BinView|nil view, string? message
function bin.open(path) end
---@param s string
---@return ascope.BinView
function bin.from_string(s) end

---@class ascope.QueryResult
---@field n integer
---@field names string[]
---@field columns table<string, ascope.Column>

---@class ascope.Database
local Database = {}
---@param sql string
---@param ... any parameters
---@return ascope.QueryResult|nil result, string? message
function Database:query(sql, ...) end
---Is name a real table (views do not count)? nil and a message when the schema cannot be read.
---@param name string
---@return boolean|nil has, string? message
function Database:has_table(name) end
---@return nil
function Database:close() end

---@class ascope.Db
local db = {}
---Open an SQLite file read-only.
---@param path string
---@return ascope.Database|nil db, string? message
function db.open(path) end

---@class ascope.Fs
local fs = {}
---@param root string
---@param opts? {dirs?: boolean}
---@return string[]|nil paths, string? message
function fs.walk(root, opts) end
---@param path string
---@return {type: "file"|"dir"|"other", size: integer, mtime: integer}|nil, string?
function fs.stat(path) end
---@param dir string
---@return string[]|nil names, string? message
function fs.list(dir) end
---Write atomically: a temporary file renamed into place.
---@param path string
---@param ... string
---@return boolean|nil ok, string? message
function fs.write(path, ...) end
---@param path string
---@return boolean|nil ok, string? message
function fs.mkdirs(path) end
---The CPUs this process may run on (its affinity mask).
---@return integer
function fs.cpus() end
---Workers to start: jobs (default fs.cpus()), no more than the CPUs idle now, at least 1.
---@param jobs? integer
---@return integer
function fs.workers(jobs) end
---@param fd? integer 1 stdout, 2 stderr
---@return boolean
function fs.isatty(fd) end
---@return number seconds on a monotonic clock
function fs.clock() end
---@param path string
---@return string|nil, string?
function fs.realpath(path) end
---Lines of a file holding any of the literals.
---@param path string
---@param literals string[]
---@return ascope.Column|nil lines, ascope.Column? texts
function fs.grep(path, literals) end

---@class ascope.Par
local par = {}
---Run fn on every item in worker processes; one failing item never loses the others. With
---more than one worker it collects garbage and gives free heap back before forking.
---@generic T, R
---@param items T[]
---@param fn fun(item: T): R
---@param opts? {jobs?: integer, gc?: boolean, here?: boolean}
---@return R[] results, table<integer, string> errors, integer failed_count
function par.map(items, fn, opts) end

---@class ascope.StackTree
local StackTree = {}
---The id of the stack's innermost frame (frames created as needed), nil when it has none.
---@param stack string frames separated by ";\r\n", ";\n" or NUL, the root last
---@return integer|nil
function StackTree:add(stack) end
---Per row of a string column of call stacks, the id of its innermost frame (nil: no frames);
---each distinct stack is added once, its frames read from the column's string table.
---@param stacks ascope.Column
---@return ascope.Column
function StackTree:ids(stacks) end
---The "stackFrames" members created so far, separated by ",\n" (a json writer writes them with
---`w:frames(tree, label_max)` without making this string); names longer than `label_max` bytes
---are cut as report labels.
---@param label_max? integer
---@return string
function StackTree:json(label_max) end

---@class ascope.StackTreeModule
local stacktree = {}
---@return ascope.StackTree
function stacktree.new() end
---Per row of a string column of call stacks, its top frame (the text before the first ";\r\n",
---else before the first ";\n", trimmed); missing where the stack is, and where the top frame is
---blank when blank is false.
---@param stacks ascope.Column
---@param blank? boolean
---@return ascope.Column
function stacktree.top(stacks, blank) end
---Call stacks from their frames' rows, as a profiler database holds them: one stack per run of
---equal chain keys (rows whose key is missing belong to none), its frames joined with ";\r\n"
---in row order, straight into the string table. Returns the stacks, each one's key and the count
---of frames without a value (joined as ""); or nil, "too big", bytes when the stacks would take
---more than `max_bytes` (a frame and its separator counted); or, given `depths`, nil, "order" when
---the rows are not grouped by chain in key order with rising depths.
---@param chains ascope.Column integer column
---@param frames ascope.Column string column, as many rows
---@param max_bytes? integer
---@param depths? ascope.Column integer column, as many rows
---@return ascope.Column|nil stacks
---@return ascope.Column|string keys_or_why
---@return integer missing_or_bytes
function stacktree.join(chains, frames, max_bytes, depths) end

---@class ascope_core
---@field stacktree ascope.StackTreeModule
---@field column ascope.ColumnModule
---@field json ascope.Json
---@field csv ascope.Csv
---@field interval ascope.Interval
---@field match ascope.Match
---@field bin ascope.Bin
---@field db ascope.Db
---@field fs ascope.Fs
---@field par ascope.Par
local ascope_core = {}
---@return {lua: string, yajl: string, libcsv: string, sqlite: string}
function ascope_core.versions() end

return ascope_core
