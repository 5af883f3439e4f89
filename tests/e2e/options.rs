//! Option errors stop the JVM with one clear line; good options start it with one line.

use orca_tests::*;

fn start_with(options: &str, extra: &[&str]) -> Run {
    let jdk = jdk17();
    let cmd = java_command(jdk, options, extra, "Hello", &[]);
    finish(work_dir().join("unused"), output_with_timeout(cmd, 60))
}

#[test]
fn bad_options_refuse_to_start_naming_the_option() {
    let file_as_dir = work_dir().join("a-file");
    std::fs::write(&file_as_dir, "x").unwrap();
    let under_file = format!("file={}/run", file_as_dir.display());
    let cases: Vec<(&str, &str)> = vec![
        ("stackdepth=abc", "'stackdepth'"),
        ("stackdepth=", "'stackdepth'"),
        ("stackdepth=-1", "'stackdepth'"),
        ("stackdepth=99999", "'stackdepth'"),
        ("mode=fast", "jvmti, instrument"),
        ("mode=", "'mode'"),
        ("colour=red", "'colour'"),
        ("file=", "'file'"),
        ("out/x,bare", "'bare'"),
        ("stackdepth=1,stackdepth=2", "twice"),
        ("out/x,file=out/y", "twice"),
        ("jdk=maybe", "yes, no"),
        ("mode=jvmti,jdk=yes", "mode=instrument"),
        ("file=/proc/orca-cannot/run", "/proc/orca-cannot"),
        (&under_file, "a-file"),
    ];
    for (opts, needle) in cases {
        let run = start_with(opts, &[]);
        assert_ne!(run.code, Some(0), "{opts:?} started the JVM");
        assert!(!run.stdout.contains("hello"), "{opts:?}: the program ran");
        let ours: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("orca: "))
            .collect();
        assert_eq!(
            ours.len(),
            1,
            "{opts:?}: expected one orca line, got:\n{}",
            run.stderr
        );
        assert!(
            ours[0].contains(needle),
            "{opts:?}: {:?} does not mention {needle:?}",
            ours[0]
        );
    }
}

#[test]
fn loading_twice_is_refused() {
    let agent = agent_path();
    let second = format!(
        "-agentpath:{}={}/twice2",
        agent.display(),
        work_dir().display()
    );
    let run = start_with(&format!("{}/twice1", work_dir().display()), &[&second]);
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("already loaded"), "{}", run.stderr);
}

#[test]
fn default_prefix_and_start_and_exit_lines() {
    let dir = work_dir().join("default-prefix");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = java_command(jdk17(), "", &[], "Hello", &[]);
    // `-agentpath:...=` with nothing after it: the defaults.
    cmd.current_dir(&dir);
    let run = finish(dir.join("orca"), output_with_timeout(cmd, 60));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("hello"));
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert_eq!(
        lines[0],
        "orca: recording (mode=instrument, trace=summary, holdtiming=sampled, tracking=sampled, stackdepth=8) to orca.orca, orca.methods, orca.classtable"
    );
    assert!(
        lines[1].starts_with("orca: ")
            && lines[1].ends_with("; wrote orca.orca, orca.methods, orca.classtable"),
        "{}",
        lines[1]
    );
    for ext in ["orca", "methods", "classtable"] {
        assert!(dir.join(format!("orca.{ext}")).exists());
    }
    let log = run.log();
    assert_valid(&run, &log);
}

/// An attach (`jcmd PID JVMTI.agent_load`) in JVMTI mode is refused with the real reason,
/// and so are bad options; the program runs on. A running HotSpot no longer offers
/// MethodEntry/MethodExit events, local variable access or owned-monitor information: this
/// is the "JVM without the needed capabilities" case, reached with a real JVM. The option
/// string is checked as at start-up. (Instrumentation mode records a running JVM:
/// cli/tests/attach.rs.)
#[test]
fn attach_in_jvmti_mode_is_refused_with_the_missing_capabilities_and_the_program_runs_on() {
    use std::io::{BufRead, BufReader};
    for jdk in jdks() {
        let mut cmd = std::process::Command::new(jdk.java());
        cmd.args(["-XX:+EnableDynamicAgentLoading", "-cp"])
            .arg(test_classes())
            .args(["Exits", "wait"]);
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.contains("ready") {}
        let jcmd = jdk.home.join("bin/jcmd");
        // jcmd reads `a=b` as its own named argument unless the option string is quoted.
        let mut said = String::new();
        for options in ["\"mode=jvmti\"", "\"stackdepth=deep\""] {
            let attach = std::process::Command::new(&jcmd)
                .arg(child.id().to_string())
                .arg("JVMTI.agent_load")
                .arg(agent_path())
                .arg(options)
                .output()
                .unwrap();
            said.push_str(&String::from_utf8_lossy(&attach.stdout));
        }
        let alive = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let ctx = format!("{}: jcmd said {said:?}; JVM stderr {stderr:?}", jdk.label());
        assert!(alive, "the JVM died on the attach attempts: {ctx}");
        assert!(!status.success());
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("orca: ")).collect();
        assert_eq!(lines.len(), 2, "one line per attempt: {ctx}");
        assert!(
            lines[0]
                .starts_with("orca: mode=jvmti cannot record a running JVM: it needs JVMTI capabilities HotSpot offers only to an agent loaded at start-up (")
                && lines[0].contains("can_generate_method_entry_events")
                && lines[0].contains("can_access_local_variables")
                && !lines[0].contains("can_generate_monitor_events"),
            "{ctx}"
        );
        assert!(
            lines[1].contains("bad value 'deep' for option 'stackdepth'"),
            "{ctx}"
        );
        // The codes orca attach reads (agent/src/entry.rs, attach_code).
        assert!(said.contains("return code: 104"), "{ctx}");
        assert!(said.contains("return code: 103"), "{ctx}");
    }
}
