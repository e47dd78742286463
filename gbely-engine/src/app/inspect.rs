//! Reading an agent file without running it: its syntax tree (Python's `ast`) says whether
//! `decide` is defined, what it imports, and the name and versions it gives itself.

use std::path::Path;

use super::runs::agent_spec::AgentSpec;
use super::runs::interpreter::isolated;
use super::runs::RunError;

/// Reads the agent's syntax tree without running it (the structural part of `gbely check`).
///
/// `decide`: what the name is bound to at the end of the module, looking into the bodies of
/// top-level `if`/`else`, `try`/`except`/`else`/`finally` and `with` blocks (branches are
/// alternatives: when one gives a function, the others only warn). A function passes; so do a
/// lambda and `decide = other_function` (callable, and the harness calls it like a function); a
/// call, attribute or subscript passes with a warning (the source cannot say what it gives); any
/// other value (`decide = 42`), a class or an `async def` fails.
///
/// Imports: a module outside the standard library fails, unless every import of it is inside a
/// `try` whose handlers catch `ImportError` (or `ModuleNotFoundError`, `Exception`, a bare
/// `except`): that is an optional import with a fallback, and only a warning. Imports under
/// `if TYPE_CHECKING:` never run (only a type checker reads them, e.g. `from gbely.types import
/// Stav`) and are not counted; the `else` branch is.
///
/// Isolation (`isolation`: `[line, what, kind]`): what cannot work at the judge, which gives an
/// agent no network and no other processes (rules §8): imports of network modules (`socket`,
/// `ssl`, `urllib.request`, `http.client`, `http.server`, `xmlrpc`, `ftplib`, `smtplib`, …, and
/// `requests`, `httpx`, `aiohttp`, `urllib3`, `websockets`) and of process modules
/// (`subprocess`, `multiprocessing`, `pty`), and calls that start a program or a process
/// (`os.system`, `os.popen`, `os.exec*`, `os.spawn*`, `os.fork`, `os.posix_spawn*`,
/// `asyncio.create_subprocess_*`, `concurrent.futures.ProcessPoolExecutor`) or open a connection
/// (`asyncio.open_connection`, `asyncio.start_server`), through any alias (`import os as o`,
/// `from os import system`). Anywhere in the file, guarded or not, except under `if
/// TYPE_CHECKING:`. `urllib.parse` and `http.HTTPStatus` touch no network and are not counted.
pub const INSPECT_PY: &str = r#"
import ast, json, sys
sys.setrecursionlimit(10000)
path = sys.argv[1]
out = {"decide": None, "non_stdlib": [], "optional": [], "syntax_error": None, "meta": {}}
try:
    # The source comes on stdin, read by gbely (a regular file, within a bound): this never
    # opens the agent's path.
    src = sys.stdin.buffer.read().decode("utf-8-sig")
    tree = ast.parse(src, filename=path)
    # What the parser accepts and the compiler refuses ('return' outside a function, a
    # duplicate argument, nonlocal at module level) does not import either: compiled here too.
    compile(tree, path, "exec", dont_inherit=True)
except (RecursionError, MemoryError) as e:
    # A nesting bomb ("-" * 400000 + "1"): the file's own fault, said as such.
    out["syntax_error"] = "it is nested too deeply for Python's parser (%s%s)" % (type(e).__name__, ": " + str(e) if str(e) else "")
    print(json.dumps(out)); sys.exit(0)
except (SyntaxError, UnicodeDecodeError, ValueError) as e:
    out["syntax_error"] = str(e) or type(e).__name__
    print(json.dumps(out)); sys.exit(0)

TRY = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}

def catches_import_error(handler):
    t = handler.type
    if t is None:
        return True
    for n in (t.elts if isinstance(t, ast.Tuple) else [t]):
        if (isinstance(n, ast.Name) and n.id in CATCHES) or (isinstance(n, ast.Attribute) and n.attr in CATCHES):
            return True
    return False

def type_checking(node):
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")

required, optional = set(), set()
def imports(node, guarded):
    if isinstance(node, ast.If) and type_checking(node):
        for n in node.orelse:
            imports(n, guarded)
        return
    if isinstance(node, ast.Import):
        (optional if guarded else required).update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        (optional if guarded else required).add(node.module.split(".")[0])
    if isinstance(node, TRY):
        inner = guarded or any(catches_import_error(h) for h in node.handlers)
        for n in node.body:
            imports(n, inner)
        for n in node.handlers + node.orelse + node.finalbody:
            imports(n, guarded)
        return
    for n in ast.iter_child_nodes(node):
        imports(n, guarded)
imports(tree, False)

MAYBE_CALLABLE = (ast.Call, ast.Attribute, ast.Subscript, ast.IfExp, ast.NamedExpr)
def binding(n):
    """(line, kind, problem, the value's type) when the statement binds `decide`, else None."""
    if isinstance(n, ast.FunctionDef) and n.name == "decide":
        return (n.lineno, "function", None, None)
    if isinstance(n, ast.AsyncFunctionDef) and n.name == "decide":
        return (n.lineno, "async", "decide (line %d) is an async function: the harness calls decide(stav) and needs the commands, not a coroutine" % n.lineno, None)
    if isinstance(n, ast.ClassDef) and n.name == "decide":
        return (n.lineno, "class", "decide (line %d) is a class, not a function decide(stav)" % n.lineno, None)
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        if any((a.asname or a.name) == "decide" for a in n.names):
            return (n.lineno, "imported", None, None)
        return None
    if isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n, "value", None) is not None:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        if any(isinstance(t, ast.Name) and t.id == "decide" for t in targets):
            v = n.value
            if isinstance(v, ast.Lambda):
                return (n.lineno, "lambda", None, None)
            if isinstance(v, ast.Name):
                return (n.lineno, "alias", None, None)
            if isinstance(v, MAYBE_CALLABLE):
                return (n.lineno, "assigned", None, None)
            t = type(v).__name__
            return (n.lineno, "value", "decide (line %d) is assigned a value (%s), not a function: define def decide(stav): at the top level" % (n.lineno, t), t)
    return None

# What `decide` may be bound to after a block: a set of bindings, None for "not bound".
# Branches (if/else, try/except) are alternatives; statements in a row replace each other.
def scan(body, cur):
    for n in body:
        b = binding(n)
        if b is not None:
            cur = {b}
        elif isinstance(n, ast.If):
            cur = scan(n.body, cur) | scan(n.orelse, cur)
        elif isinstance(n, TRY):
            after = scan(n.orelse, scan(n.body, cur))
            for h in n.handlers:
                after = after | scan(h.body, cur | scan(n.body, cur))
            cur = scan(n.finalbody, after)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            cur = scan(n.body, cur)
    return cur
final = scan(tree.body, {None})
good = sorted(b for b in final if b is not None and b[2] is None)
bad = sorted(b for b in final if b is not None and b[2] is not None)
if good:
    line, kind, _, _ = good[-1]
    other = [b[2] for b in bad] + (["decide is not defined at all"] if None in final else [])
    kinds = [[b[1], b[0], b[3]] for b in bad] + ([["undefined", None, None]] if None in final else [])
    out["decide"] = {"line": line, "kind": kind, "problem": None, "maybe": other, "maybe_kinds": kinds}
elif bad:
    line, kind, problem, value_type = bad[-1]
    out["decide"] = {"line": line, "kind": kind, "problem": problem, "maybe": [], "type": value_type}
std = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names) | {"pravidla", "__future__"}
if std:
    out["non_stdlib"] = sorted(n for n in required if n not in std)
    out["optional"] = sorted(n for n in optional - required if n not in std)
# What cannot work at the judge: no network, no other processes (see the Rust doc above).
NET_MODULES = {"socket", "ssl", "socketserver", "ftplib", "smtplib", "poplib", "imaplib", "nntplib",
               "telnetlib", "xmlrpc", "requests", "httpx", "aiohttp", "urllib3", "websocket", "websockets"}
NET_SUBMODULES = {"urllib.request", "urllib.robotparser", "http.client", "http.server", "http.cookiejar"}
PROC_MODULES = {"subprocess", "multiprocessing", "pty", "concurrent.futures.process"}
NET_CALLS = {"asyncio.open_connection", "asyncio.start_server", "asyncio.open_unix_connection",
             "asyncio.start_unix_server"}
PROC_CALLS = {"os.system", "os.popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp",
              "os.startfile", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
              "concurrent.futures.ProcessPoolExecutor"}
def kind_of_module(name):
    parts = name.split(".")
    for k in range(1, len(parts) + 1):
        head = ".".join(parts[:k])
        if head in NET_MODULES or head in NET_SUBMODULES:
            return "network"
        if head in PROC_MODULES:
            return "process"
    return None
def kind_of_call(name):
    if name in NET_CALLS:
        return "network"
    if name in PROC_CALLS or (name.startswith(("os.exec", "os.spawn")) and name.count(".") == 1):
        return "process"
    return None
aliases = {}      # a local name -> the dotted name it stands for
isolation = set()
def runtime_nodes(node):
    """Every node that may run: not those under `if TYPE_CHECKING:`."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.If) and type_checking(n):
            stack.extend(n.orelse)
        else:
            stack.extend(ast.iter_child_nodes(n))
nodes = list(runtime_nodes(tree))
for n in nodes:
    if isinstance(n, ast.Import):
        for a in n.names:
            kind = kind_of_module(a.name)
            if kind:
                isolation.add((n.lineno, "imports " + a.name, kind))
            if a.asname:
                aliases[a.asname] = a.name
            else:
                top = a.name.split(".")[0]
                aliases.setdefault(top, top)
    elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
        kind = kind_of_module(n.module)
        if kind:
            isolation.add((n.lineno, "imports " + n.module, kind))
        for a in n.names:
            full = n.module + "." + a.name
            aliases[a.asname or a.name] = full
            sub = kind_of_module(full) if not kind else None
            if sub:
                isolation.add((n.lineno, "imports " + full, sub))
            elif not kind and kind_of_call(full):
                isolation.add((n.lineno, "imports " + full, kind_of_call(full)))
def dotted(e):
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name) or e.id not in aliases:
        return None
    return ".".join([aliases[e.id]] + parts[::-1])
for n in nodes:
    if isinstance(n, ast.Call):
        name = dotted(n.func)
        kind = name and kind_of_call(name)
        if kind:
            isolation.add((n.lineno, "calls " + name, kind))
out["isolation"] = sorted(isolation)
# The agent's own name and versions: top-level `AGENT_NAME = "…"` and the like, literals only.
for n in tree.body:
    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
        key, v = n.targets[0].id, n.value
        if key in ("AGENT_NAME", "AGENT_VERSION", "GAME_VERSION") and isinstance(v, ast.Constant) \
                and isinstance(v.value, (str, int, float)) and not isinstance(v.value, bool):
            out["meta"][key] = str(v.value).strip()[:60]
print(json.dumps(out))
"#;

/// The most of an agent file that is read to inspect it: far more than a submission may have
/// (512 KiB); a larger file is refused.
pub const MAX_INSPECTED_BYTES: u64 = 8 << 20;

/// What [`INSPECT_PY`] reports of a file (JSON: `decide`, `non_stdlib`, `optional`,
/// `syntax_error`, `meta`).
///
/// The file is read here (a regular file of at most [`MAX_INSPECTED_BYTES`]: a named pipe or a
/// device is refused unopened) and handed to an isolated Python ([`isolated`]) on its stdin, so
/// nothing beside the agent or in the working folder is ever imported.
pub fn inspect_source(py: &str, path: &Path) -> Result<serde_json::Value, RunError> {
    use std::io::Write;
    let failed = |why: String| RunError::Inspect { path: path.display().to_string(), why };
    let source = crate::files::read_bounded(path, MAX_INSPECTED_BYTES).map_err(|e| failed(e.to_string()))?;
    let mut child = isolated(py)
        .arg("-c")
        .arg(INSPECT_PY)
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|error| RunError::NoPython { python: py.to_string(), error })?;
    let mut stdin = child.stdin.take().expect("piped");
    // Written from a thread: the reader may answer before it has read all (a syntax error).
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&source);
    });
    let out = child.wait_with_output().map_err(|e| failed(e.to_string()))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(failed(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| failed(e.to_string()))
}

/// Something an agent file does that cannot work at the judge (no network, no other processes;
/// see [`INSPECT_PY`]'s `isolation`), with the lines it does it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsolationCall {
    /// An import (`imports socket`), else a call (`calls os.system`).
    pub imports: bool,
    /// What it imports or calls.
    pub name: String,
    /// Whether it needs the network (else: other processes).
    pub network: bool,
    pub lines: Vec<u64>,
}

impl IsolationCall {
    /// The first five of its lines, as the warning lists them (`3, 5`).
    pub fn shown_lines(&self) -> String {
        self.lines.iter().take(5).map(u64::to_string).collect::<Vec<_>>().join(", ")
    }

    /// The warning, e.g. `imports socket (line 3): the judge has no network`.
    pub fn text(&self) -> String {
        let why = if self.network { "the judge has no network" } else { "the judge gives no other processes" };
        let more = if self.lines.len() > 5 { format!(" and {} more", self.lines.len() - 5) } else { String::new() };
        let s = if self.lines.len() > 1 { "s" } else { "" };
        let verb = if self.imports { "imports" } else { "calls" };
        format!("{verb} {} (line{s} {}{more}): {why}", self.name, self.shown_lines())
    }
}

/// What an agent file does that cannot work at the judge, one entry per thing.
pub fn isolation_calls(report: &serde_json::Value) -> Vec<IsolationCall> {
    let mut grouped: Vec<(String, &str, Vec<u64>)> = Vec::new();
    for entry in report["isolation"].as_array().into_iter().flatten() {
        let (Some(line), Some(what), Some(kind)) = (entry[0].as_u64(), entry[1].as_str(), entry[2].as_str()) else {
            continue;
        };
        match grouped.iter_mut().find(|(w, _, _)| w == what) {
            Some((_, _, lines)) => lines.push(line),
            None => grouped.push((what.to_string(), kind, vec![line])),
        }
    }
    grouped
        .into_iter()
        .map(|(what, kind, lines)| {
            let (imports, name) = match what.strip_prefix("imports ") {
                Some(name) => (true, name.to_string()),
                None => (false, what.strip_prefix("calls ").unwrap_or(&what).to_string()),
            };
            IsolationCall { imports, name, network: kind == "network", lines }
        })
        .collect()
}

/// The warnings for what an agent file does that cannot work at the judge: one line per thing,
/// with its lines, e.g. `imports socket (line 3): the judge has no network`.
pub fn isolation_warnings(report: &serde_json::Value) -> Vec<String> {
    isolation_calls(report).iter().map(IsolationCall::text).collect()
}

/// The name and versions an agent file gives itself (`AGENT_NAME`, `AGENT_VERSION`,
/// `GAME_VERSION` at top level, as literals).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AgentMeta {
    pub name: Option<String>,
    pub version: Option<String>,
    pub game_version: Option<String>,
}

impl AgentMeta {
    pub fn of(report: &serde_json::Value) -> AgentMeta {
        let get = |k: &str| report["meta"][k].as_str().filter(|s| !s.is_empty()).map(str::to_string);
        AgentMeta { name: get("AGENT_NAME"), version: get("AGENT_VERSION"), game_version: get("GAME_VERSION") }
    }

    /// `Mravec 7` from its name and version, or `fallback` (the file name) when it gives none.
    /// Control characters in them are shown escaped ([`crate::text::printable`]): the name is
    /// printed by every summary and table.
    pub fn display_name(&self, fallback: &str) -> String {
        let name = match (&self.name, &self.version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            (None, Some(v)) => format!("{fallback} {v}"),
            (None, None) => fallback.to_string(),
        };
        crate::text::printable(&name).into_owned()
    }

    /// A warning when the agent was written for other rules than this engine plays.
    pub fn game_version_warning(&self, who: &str) -> Option<String> {
        let v = self.game_version.as_deref()?;
        (v != gbely_rules::constants::GAME_VERSION.to_string()).then(|| {
            format!(
                "{who} says GAME_VERSION = {v}, but this engine plays the rules of version {}",
                gbely_rules::constants::GAME_VERSION
            )
        })
    }
}

/// The name an agent spec is shown under: the name and version an agent file gives itself, else
/// its file name; with a warning when it was written for other rules.
pub fn display_name(spec: &AgentSpec, py: &str) -> (String, Option<String>) {
    let file = spec.display_name();
    match spec.file().filter(|_| spec.is_python()).and_then(|f| file_meta(f, py)) {
        Some(meta) => (meta.display_name(&file), meta.game_version_warning(&file)),
        None => (file, None),
    }
}

/// The meta of a Python agent file (`None` for another file, or when it cannot be read: the
/// match says why later).
pub fn file_meta(file: &Path, py: &str) -> Option<AgentMeta> {
    if !file.to_string_lossy().ends_with(".py") || !file.is_file() {
        return None;
    }
    inspect_source(py, file).ok().map(|r| AgentMeta::of(&r))
}

/// One agent file: what it says of itself, and what the check would say of its source.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Listed {
    pub file: String,
    pub name: String,
    pub meta: AgentMeta,
    pub bytes: u64,
    /// `ok`, `warn` (optional imports, a GAME_VERSION for other rules, network or process use)
    /// or `fail`.
    pub check: &'static str,
    /// Why it would fail or warn.
    pub why: Vec<String>,
}

/// The agent file `f` as `gbely agents` lists it: the structural part of the check, from its
/// source alone (read by the interpreter `py`, never run).
pub fn list_agent(py: &str, f: &Path) -> Result<Listed, RunError> {
    let file = f.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let bytes = std::fs::metadata(f).map_or(0, |m| m.len());
    let report = inspect_source(py, f)?;
    let meta = AgentMeta::of(&report);
    let mut fail = Vec::new();
    let mut warn = Vec::new();
    if bytes > gbely_rules::constants::MAX_SUBMISSION_BYTES {
        fail.push(format!("{bytes} bytes: more than 512 KiB"));
    }
    if let Some(e) = report["syntax_error"].as_str() {
        fail.push(format!("does not parse: {e}"));
    } else if let Some(p) = report["decide"]["problem"].as_str() {
        fail.push(p.to_string());
    } else if report["decide"].is_null() {
        fail.push("no top-level function decide(stav)".into());
    }
    let list = |k: &str| -> Vec<String> {
        report[k].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(String::from)).collect()
    };
    if !list("non_stdlib").is_empty() {
        fail.push(format!("imports outside the standard library: {}", list("non_stdlib").join(", ")));
    }
    if !list("optional").is_empty() {
        warn.push(format!("optional imports: {}", list("optional").join(", ")));
    }
    warn.extend(meta.game_version_warning(&file));
    warn.extend(isolation_warnings(&report));
    let check = if !fail.is_empty() {
        "fail"
    } else if !warn.is_empty() {
        "warn"
    } else {
        "ok"
    };
    fail.extend(warn);
    Ok(Listed { name: meta.display_name(&file), file, meta, bytes, check, why: fail })
}
