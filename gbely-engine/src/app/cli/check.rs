//! `gbely check`: the submission check.

use super::*;

/// The submission check (`gbely check`).
pub(super) fn cmd_check(a: CheckArgs) -> Result<u8> {
    let py = resolve_python(&python(a.python.as_deref()))?;
    let mut problems: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let path = &a.agent;
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().and_then(|e| e.to_str()) != Some("py") {
        problems.push(format!("{} is not a .py file: the submission is one Python file", path.display()));
    }
    if meta.len() > constants::MAX_SUBMISSION_BYTES {
        problems.push(format!(
            "the file has {} bytes; the limit is {} (512 KiB)",
            meta.len(),
            constants::MAX_SUBMISSION_BYTES
        ));
    } else {
        notes.push(format!("size {} bytes of 524288 allowed", meta.len()));
    }
    let inspect = inspect_source(&py, path)?;
    if let Some(err) = inspect.get("syntax_error").and_then(|v| v.as_str()) {
        problems.push(format!("the file does not parse: {err}"));
    }
    let mut warnings: Vec<String> = Vec::new();
    match inspect.get("decide").filter(|d| !d.is_null()) {
        None if inspect["syntax_error"].is_null() => {
            problems.push("the file defines no top-level function decide(stav)".into());
        }
        None => {}
        Some(d) => {
            for other in d["maybe"].as_array().into_iter().flatten().filter_map(|m| m.as_str()) {
                warnings.push(format!("on another branch: {other}"));
            }
            if let Some(p) = d["problem"].as_str() {
                problems.push(p.to_string());
            } else if d["kind"] == "assigned" {
                warnings.push(format!(
                    "decide (line {}) is assigned the result of an expression: the check cannot see that it is a function",
                    d["line"]
                ));
            }
        }
    }
    let foreign: Vec<String> = inspect
        .get("non_stdlib")
        .and_then(|v| v.as_array())
        .map(|l| l.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if !foreign.is_empty() {
        problems.push(format!(
            "imports outside the standard library (the judge will not have them): {}",
            foreign.join(", ")
        ));
    }
    let optional: Vec<&str> =
        inspect["optional"].as_array().map(|l| l.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    if !optional.is_empty() {
        warnings.push(format!(
            "optional imports outside the standard library, guarded by try/except ImportError: {} \
             (the judge will not have them: your fallback will run)",
            optional.join(", ")
        ));
    }
    let mut timing = None;
    let mut startup = None;
    let mut violations = Vec::new();
    if problems.is_empty() {
        let run_dir = unique_dir(PathBuf::from("gbely-runs").join(format!(
            "{}-check-{}",
            timestamp(),
            file_stem(&path.to_string_lossy())
        )));
        std::fs::create_dir_all(&run_dir)?;
        let map = Arc::new(gbely_world::reference_map());
        let limit = ProcessConfig::default_time_limit();
        let abs = std::fs::canonicalize(path)?;
        let mut cfg = ProcessConfig::new(run_dir.join(".seat0"), run_dir.join("seat0.log"));
        cfg.time_limit = limit;
        let mut agent = ProcessPlayer::new(
            agent_name(&path.to_string_lossy()),
            AgentCommand::Python { file: abs, python: py.clone() },
            cfg,
        )?;
        let mut council = DecidePlayer::new("council", Council::new());
        let mut players: [&mut dyn Player; 2] = [&mut agent, &mut council];
        let rec =
            play(map, &mut players, PlayOptions { config: MatchConfig { rounds: a.rounds }, record: false }, &mut ());
        let mut times = agent.stats.round_seconds.clone();
        times.sort_by(|x, y| x.total_cmp(y));
        let max = times.last().copied().unwrap_or(0.0);
        let p95 = times.get(((times.len() as f64 * 0.95).ceil() as usize).saturating_sub(1)).copied().unwrap_or(0.0);
        timing = Some((max, p95, times.len()));
        violations = rec.violations[0].clone();
        // SPEC §8: the process starts just before its first observation, so the time to answer
        // round 0 is the start-up (interpreter, imports, the first decide) the 2 s limit counts.
        if !violations.iter().any(|(round, _, _)| *round == 0) {
            startup = agent.stats.round_seconds.first().copied();
        }
        for (round, kind, detail) in &violations {
            problems.push(format!("violation in round {round}: {} — {detail}", kind.wire()));
        }
        notes.push(format!(
            "test match: {} rounds against the Council on the reference map; {} cells at the end; {}",
            rec.last_round + 1,
            rec.outcome[0].cells,
            discard_digest(&rec.discards[0])
        ));
        notes.push(format!("log: {}", run_dir.join("seat0.log").display()));
    }
    let ok = problems.is_empty();
    if a.json {
        let doc = json!({
            "file": path.display().to_string(),
            "ok": ok,
            "problems": problems,
            "notes": notes,
            "warnings": warnings,
            "decision_seconds": timing.map(|(max, p95, n)| json!({"max": max, "p95": p95, "rounds": n})),
            "startup_seconds": startup,
            "violations": violations.len(),
        });
        println!("{doc}");
    } else {
        println!("gbely check {}", path.display());
        for n in &notes {
            println!("  ok    {n}");
        }
        if let Some((max, p95, n)) = timing {
            println!(
                "  time  per decision over {n} rounds: max {:.3} s, p95 {:.3} s (limit {:.1} s)",
                max,
                p95,
                constants::ROUND_TIME_LIMIT_S
            );
        }
        if let Some(t) = startup {
            println!("  start-up  {t:.3} s (counts toward round 0's {} s)", constants::ROUND_TIME_LIMIT_S);
        }
        for w in &warnings {
            println!("  WARN  {w}");
        }
        for p in &problems {
            println!("  FAIL  {p}");
        }
        println!("{}", if ok { "the submission passes the check" } else { "the submission would FAIL" });
    }
    Ok(if ok { exit::OK } else { exit::CHECK_FAILED })
}

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
const INSPECT_PY: &str = r#"
import ast, json, sys
sys.setrecursionlimit(10000)
path = sys.argv[1]
out = {"decide": None, "non_stdlib": [], "optional": [], "syntax_error": None}
try:
    src = open(path, encoding="utf-8-sig").read()
    tree = ast.parse(src, filename=path)
except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError) as e:
    out["syntax_error"] = str(e)
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
    """(line, kind, problem) when the statement binds `decide`, else None."""
    if isinstance(n, ast.FunctionDef) and n.name == "decide":
        return (n.lineno, "function", None)
    if isinstance(n, ast.AsyncFunctionDef) and n.name == "decide":
        return (n.lineno, "async", "decide (line %d) is an async function: the harness calls decide(stav) and needs the commands, not a coroutine" % n.lineno)
    if isinstance(n, ast.ClassDef) and n.name == "decide":
        return (n.lineno, "class", "decide (line %d) is a class, not a function decide(stav)" % n.lineno)
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        if any((a.asname or a.name) == "decide" for a in n.names):
            return (n.lineno, "imported", None)
        return None
    if isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n, "value", None) is not None:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        if any(isinstance(t, ast.Name) and t.id == "decide" for t in targets):
            v = n.value
            if isinstance(v, ast.Lambda):
                return (n.lineno, "lambda", None)
            if isinstance(v, ast.Name):
                return (n.lineno, "alias", None)
            if isinstance(v, MAYBE_CALLABLE):
                return (n.lineno, "assigned", None)
            return (n.lineno, "value", "decide (line %d) is assigned a value (%s), not a function: define def decide(stav): at the top level" % (n.lineno, type(v).__name__))
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
    line, kind, _ = good[-1]
    other = [b[2] for b in bad] + (["decide is not defined at all"] if None in final else [])
    out["decide"] = {"line": line, "kind": kind, "problem": None, "maybe": other}
elif bad:
    line, kind, problem = bad[-1]
    out["decide"] = {"line": line, "kind": kind, "problem": problem, "maybe": []}
std = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names) | {"pravidla", "__future__"}
if std:
    out["non_stdlib"] = sorted(n for n in required if n not in std)
    out["optional"] = sorted(n for n in optional - required if n not in std)
print(json.dumps(out))
"#;

fn inspect_source(py: &str, path: &Path) -> Result<serde_json::Value> {
    let out = std::process::Command::new(py)
        .arg("-c")
        .arg(INSPECT_PY)
        .arg(path)
        .output()
        .with_context(|| format!("cannot run the Python interpreter `{py}` (set --python or GBELY_PYTHON)"))?;
    if !out.status.success() {
        bail!("inspecting {} failed: {}", path.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}
