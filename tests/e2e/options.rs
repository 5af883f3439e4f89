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
        "orca: recording (mode=instrument, stackdepth=8) to orca.orca, orca.methods, orca.classtable"
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

#[test]
fn late_attach_is_refused_and_the_program_runs_on() {
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
        let attach = std::process::Command::new(&jcmd)
            .arg(child.id().to_string())
            .arg("JVMTI.agent_load")
            .arg(agent_path())
            .output()
            .unwrap();
        let alive = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert!(
            alive,
            "{}: the JVM died on the attach attempt: {stderr}",
            jdk.label()
        );
        assert!(!status.success());
        assert!(
            stderr.contains("orca: loading into a running JVM is not supported"),
            "{}: jcmd said {:?} / {:?}; JVM stderr {stderr:?}",
            jdk.label(),
            String::from_utf8_lossy(&attach.stdout),
            String::from_utf8_lossy(&attach.stderr)
        );
    }
}
