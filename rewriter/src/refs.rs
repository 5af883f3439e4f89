//! Constant pool references past the end of the pool.
//!
//! Why: a rewritten class gets new constant pool entries at the end of the pool. A reference
//! anywhere in the input to an index at or past the original `constant_pool_count` is an error
//! the JVM reports (`ClassFormatError`, `VerifyError`), but in the output the same index names
//! one of the added entries, and the JVM may accept the class, or reject it differently: the
//! rewriter would change what the class means. The end-to-end mutant test found such a class
//! (a LocalVariableTable name index one past the pool, rejected by HotSpot, accepted after
//! rewriting). So before a class is changed, every reference the JVM checks is looked at: in
//! the pool itself, the class, field and method headers, the attributes HotSpot reads (code,
//! exception tables, local variable tables, stack map frames, annotations, inner classes,
//! bootstrap methods, records...) and the operands of every instruction of every method. Any
//! reference past the end, or a known attribute whose body cannot be read, makes the class
//! unreadable for the rewriter (left unchanged by the agent, with one line on stderr).

use crate::cp::{self, Pool};
use crate::error::RewriteError;
use crate::insn;
use crate::reader::Reader;

const PAST_END: &str = "past the end of the constant pool (it would name an added entry)";

struct Check<'p, 'a> {
    pool: &'p Pool<'a>,
}

impl Check<'_, '_> {
    fn idx(&self, i: u16) -> Result<(), RewriteError> {
        if i as usize >= self.pool.count() {
            return Err(RewriteError::BadConstantRef {
                index: i,
                reason: PAST_END,
            });
        }
        Ok(())
    }

    fn u2(&self, r: &mut Reader) -> Result<u16, RewriteError> {
        let i = r.u2("constant pool reference")?;
        self.idx(i)?;
        Ok(i)
    }

    /// `n` references in a row.
    fn u2s(&self, r: &mut Reader, n: usize) -> Result<(), RewriteError> {
        for _ in 0..n {
            self.u2(r)?;
        }
        Ok(())
    }

    /// A count (u2) then that many references.
    fn list(&self, r: &mut Reader) -> Result<(), RewriteError> {
        let n = r.u2("count")? as usize;
        self.u2s(r, n)
    }

    fn attributes(&self, r: &mut Reader) -> Result<(), RewriteError> {
        let n = r.u2("attributes_count")?;
        for _ in 0..n {
            let name = self.u2(r)?;
            let len = r.u4("attribute_length")? as usize;
            let body = r.bytes(len, "attribute")?;
            let start = r.pos - len;
            let mut b = Reader::new(body, 0);
            self.attribute(self.pool.utf8(name).unwrap_or(b""), &mut b)
                .map_err(|e| match e {
                    RewriteError::Truncated { .. } => RewriteError::Malformed {
                        offset: start,
                        reason: "an attribute the JVM reads is shorter than its contents",
                    },
                    e => e,
                })?;
        }
        Ok(())
    }

    fn attribute(&self, name: &[u8], r: &mut Reader) -> Result<(), RewriteError> {
        match name {
            b"ConstantValue" | b"Signature" | b"SourceFile" | b"NestHost" | b"ModuleMainClass" => {
                self.u2(r)?;
            }
            b"Exceptions" | b"NestMembers" | b"PermittedSubclasses" | b"ModulePackages" => {
                self.list(r)?
            }
            b"EnclosingMethod" => self.u2s(r, 2)?,
            b"InnerClasses" => {
                for _ in 0..r.u2("number_of_classes")? {
                    self.u2s(r, 3)?;
                    r.skip(2, "inner_class_access_flags")?;
                }
            }
            b"MethodParameters" => {
                for _ in 0..r.u1("parameters_count")? {
                    self.u2(r)?;
                    r.skip(2, "access_flags")?;
                }
            }
            b"BootstrapMethods" => {
                for _ in 0..r.u2("num_bootstrap_methods")? {
                    self.u2(r)?;
                    self.list(r)?;
                }
            }
            b"Record" => {
                for _ in 0..r.u2("components_count")? {
                    self.u2s(r, 2)?;
                    self.attributes(r)?;
                }
            }
            b"Code" => self.code(r)?,
            b"LocalVariableTable" | b"LocalVariableTypeTable" => {
                for _ in 0..r.u2("local_variable_table_length")? {
                    r.skip(4, "start_pc, length")?;
                    self.u2s(r, 2)?;
                    r.skip(2, "index")?;
                }
            }
            b"StackMapTable" => self.frames(r)?,
            b"RuntimeVisibleAnnotations" | b"RuntimeInvisibleAnnotations" => {
                for _ in 0..r.u2("num_annotations")? {
                    self.annotation(r)?;
                }
            }
            b"RuntimeVisibleParameterAnnotations" | b"RuntimeInvisibleParameterAnnotations" => {
                for _ in 0..r.u1("num_parameters")? {
                    for _ in 0..r.u2("num_annotations")? {
                        self.annotation(r)?;
                    }
                }
            }
            b"RuntimeVisibleTypeAnnotations" | b"RuntimeInvisibleTypeAnnotations" => {
                for _ in 0..r.u2("num_annotations")? {
                    self.type_annotation(r)?;
                }
            }
            b"AnnotationDefault" => self.element_value(r)?,
            _ => {}
        }
        Ok(())
    }

    fn code(&self, r: &mut Reader) -> Result<(), RewriteError> {
        r.skip(4, "max_stack, max_locals")?;
        let len = r.u4("code_length")? as usize;
        let code = r.bytes(len, "code")?;
        let mut pc = 0;
        while pc < code.len() {
            let n = insn::insn_len(code, pc)
                .map_err(|reason| RewriteError::Malformed { offset: pc, reason })?
                as usize;
            let op = code[pc];
            match op {
                // ldc
                0x12 => self.idx(*code.get(pc + 1).unwrap_or(&0) as u16)?,
                // ldc_w, ldc2_w, field and method instructions, new, anewarray, checkcast,
                // instanceof, multianewarray
                0x13 | 0x14 | 0xb2..=0xbb | 0xbd | 0xc0 | 0xc1 | 0xc5 => {
                    let mut o = Reader::new(code, pc + 1);
                    self.u2(&mut o)?;
                }
                _ => {}
            }
            pc += n.max(1);
        }
        for _ in 0..r.u2("exception_table_length")? {
            r.skip(6, "start_pc, end_pc, handler_pc")?;
            self.u2(r)?;
        }
        self.attributes(r)
    }

    fn frames(&self, r: &mut Reader) -> Result<(), RewriteError> {
        for _ in 0..r.u2("number_of_entries")? {
            let t = r.u1("frame_type")?;
            match t {
                0..=63 => {}
                64..=127 => self.vtypes(r, 1)?,
                247 => {
                    r.skip(2, "offset_delta")?;
                    self.vtypes(r, 1)?;
                }
                248..=251 => r.skip(2, "offset_delta")?,
                252..=254 => {
                    r.skip(2, "offset_delta")?;
                    self.vtypes(r, (t - 251) as usize)?;
                }
                255 => {
                    r.skip(2, "offset_delta")?;
                    let n = r.u2("number_of_locals")? as usize;
                    self.vtypes(r, n)?;
                    let n = r.u2("number_of_stack_items")? as usize;
                    self.vtypes(r, n)?;
                }
                _ => {
                    return Err(RewriteError::Malformed {
                        offset: r.pos,
                        reason: "unknown stack map frame type",
                    })
                }
            }
        }
        Ok(())
    }

    fn vtypes(&self, r: &mut Reader, n: usize) -> Result<(), RewriteError> {
        for _ in 0..n {
            match r.u1("verification_type_info")? {
                7 => {
                    self.u2(r)?;
                }
                8 => r.skip(2, "offset")?,
                _ => {}
            }
        }
        Ok(())
    }

    fn annotation(&self, r: &mut Reader) -> Result<(), RewriteError> {
        self.u2(r)?;
        for _ in 0..r.u2("num_element_value_pairs")? {
            self.u2(r)?;
            self.element_value(r)?;
        }
        Ok(())
    }

    fn element_value(&self, r: &mut Reader) -> Result<(), RewriteError> {
        match r.u1("element_value tag")? {
            b'e' => self.u2s(r, 2),
            b'@' => self.annotation(r),
            b'[' => {
                for _ in 0..r.u2("num_values")? {
                    self.element_value(r)?;
                }
                Ok(())
            }
            // B C D F I J S Z s c: one reference; anything else is not an element value
            b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => {
                self.u2(r).map(|_| ())
            }
            _ => Err(RewriteError::Malformed {
                offset: r.pos,
                reason: "unknown annotation element_value tag",
            }),
        }
    }

    fn type_annotation(&self, r: &mut Reader) -> Result<(), RewriteError> {
        match r.u1("target_type")? {
            0x00 | 0x01 | 0x16 => r.skip(1, "target_info")?,
            0x10 | 0x17 | 0x42..=0x46 => r.skip(2, "target_info")?,
            0x11 | 0x12 => r.skip(2, "target_info")?,
            0x13..=0x15 => {}
            0x40 | 0x41 => {
                let n = r.u2("table_length")? as usize;
                r.skip(6 * n, "localvar_target")?;
            }
            0x47..=0x4b => r.skip(3, "type_argument_target")?,
            _ => {
                return Err(RewriteError::Malformed {
                    offset: r.pos,
                    reason: "unknown type annotation target_type",
                })
            }
        }
        let path = r.u1("type_path length")? as usize;
        r.skip(2 * path, "type_path")?;
        self.annotation(r)
    }
}

/// Checks every constant pool reference of the class file `bytes` (pool `pool` ending at
/// `cp_end`) that the JVM checks, and the bodies of the attributes holding them: an error for
/// a reference past the end of the pool or a body that cannot be read.
pub(crate) fn check(bytes: &[u8], pool: &Pool, cp_end: usize) -> Result<(), RewriteError> {
    let c = Check { pool };
    let mut bad = None;
    cp::walk(bytes, |_, off, tag| {
        let refs: &[usize] = match tag {
            // Class, String, MethodType, Module, Package
            7 | 8 | 16 | 19 | 20 => &[1],
            // Field/Method/InterfaceMethod ref, NameAndType
            9..=12 => &[1, 3],
            // MethodHandle: reference_kind, then the reference
            15 => &[2],
            // Dynamic, InvokeDynamic: bootstrap method attribute index, then NameAndType
            17 | 18 => &[3],
            _ => &[],
        };
        for &k in refs {
            let i = crate::reader::be16(bytes, off + k).unwrap_or(0);
            if bad.is_none() && c.idx(i).is_err() {
                bad = Some(i);
            }
        }
    })?;
    if let Some(index) = bad {
        return Err(RewriteError::BadConstantRef {
            index,
            reason: PAST_END,
        });
    }
    let mut r = Reader::new(bytes, cp_end);
    r.skip(2, "access_flags")?;
    c.u2s(&mut r, 2)?; // this_class, super_class
    c.list(&mut r)?; // interfaces
    for _ in 0..2 {
        // fields, then methods
        for _ in 0..r.u2("members_count")? {
            r.skip(2, "access_flags")?;
            c.u2s(&mut r, 2)?;
            c.attributes(&mut r)?;
        }
    }
    c.attributes(&mut r)
}
