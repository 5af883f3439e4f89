//! `orca timeline`: placeholder until implemented.
use orca_format::Metadata;
pub fn run(_p: &std::path::Path, _md: &Metadata, _o: &std::path::Path) -> std::io::Result<u64> {
    Ok(0)
}
