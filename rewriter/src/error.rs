//! Errors for class files the rewriter cannot even read.
//!
//! Why a dedicated enum: the agent calls the rewriter from the
//! ClassFileLoadHook and must decide, without guessing, whether to keep the
//! original bytes; every variant says where the input went wrong so that a
//! bug report can be acted on.

use thiserror::Error;

/// A class file that is structurally unreadable. The caller must keep the
/// original bytes (the JVM will report its own error, or accept a class we do
/// not understand).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RewriteError {
    /// The first four bytes are not `0xCAFEBABE`: not a class file at all.
    #[error("not a class file: magic is {0:#010x}, expected 0xcafebabe")]
    BadMagic(u32),
    /// Class file versions outside 45..=69 (JDK 1.1 to JDK 25) are refused
    /// because their format may hold structures we do not know.
    #[error("unsupported class file version {major}.{minor} (supported: 45 to 69)")]
    UnsupportedVersion {
        /// major_version field
        major: u16,
        /// minor_version field
        minor: u16,
    },
    /// The input ends before a structure it announces.
    #[error("truncated class file: {what} needs bytes up to {needed}, input has {len}")]
    Truncated {
        /// which structure was being read
        what: &'static str,
        /// offset one past the last byte that was needed
        needed: usize,
        /// length of the input
        len: usize,
    },
    /// A constant pool entry has a tag this rewriter does not know.
    #[error("constant pool entry #{index} has unknown tag {tag} at byte {offset}")]
    BadConstantTag {
        /// constant pool index
        index: u16,
        /// tag byte found
        tag: u8,
        /// byte offset in the input
        offset: usize,
    },
    /// A constant pool reference is out of range or points at the wrong kind
    /// of entry.
    #[error("bad constant pool reference #{index}: {reason}")]
    BadConstantRef {
        /// referenced index
        index: u16,
        /// what was expected
        reason: &'static str,
    },
    /// Anything else that makes the class structurally invalid.
    #[error("malformed class file at byte {offset}: {reason}")]
    Malformed {
        /// byte offset in the input
        offset: usize,
        /// what is wrong
        reason: &'static str,
    },
    /// The inserted code needs more than 65535 constant pool entries.
    #[error("constant pool would exceed 65535 entries after adding tracker references")]
    ConstantPoolFull,
}
