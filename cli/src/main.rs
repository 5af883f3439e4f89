fn main() {
    eprintln!("orca: not built yet");
    std::process::exit(2)
}
