//! A bounded reader for Python pickles (protocols 2-5), enough for PyTorch flight recorder dumps
//! (written by PyTorch's C++ `torch::jit::Pickler`, protocol 2, from `pickle_str` in
//! `torch/csrc/distributed/c10d/FlightRecorder*`: a dict of lists, dicts, tuples, strings and numbers).
//! Written here rather than taken from a crate so that a truncated or hostile file gives a clear
//! error under fixed limits on input size, nesting and work. Nothing is executed: GLOBAL/REDUCE are
//! accepted only for the TorchScript list builders that return their argument unchanged
//! (`torch.jit._pickle.build_intlist` and kin), everything else is refused. Opcode semantics:
//! CPython `Lib/pickletools.py`.

use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Dict(Vec<(Value, Value)>),
    /// A `module.name` reference (GLOBAL), only ever consumed by REDUCE of a known builder.
    Global(String),
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(items) => items.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    pub fn items(&self) -> &[Value] {
        match self {
            Value::List(v) | Value::Tuple(v) => v,
            _ => &[],
        }
    }

    /// Python-like rendering for evidence: `[[1025]]`, `'all_reduce'`.
    pub fn render(&self) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Str(s) => s.clone(),
            Value::Bytes(b) => format!("<{} bytes>", b.len()),
            Value::List(v) => format!("[{}]", v.iter().map(Value::render).collect::<Vec<_>>().join(", ")),
            Value::Tuple(v) => format!("({})", v.iter().map(Value::render).collect::<Vec<_>>().join(", ")),
            Value::Dict(v) => {
                format!(
                    "{{{}}}",
                    v.iter().map(|(k, v)| format!("{}: {}", k.render(), v.render())).collect::<Vec<_>>().join(", ")
                )
            }
            Value::Global(name) => name.clone(),
        }
    }

    fn weight(&self) -> usize {
        match self {
            Value::List(v) | Value::Tuple(v) => 1 + v.iter().map(Value::weight).sum::<usize>(),
            Value::Dict(v) => 1 + v.iter().map(|(k, v)| k.weight() + v.weight()).sum::<usize>(),
            Value::Str(s) => 1 + s.len() / 64,
            Value::Bytes(b) => 1 + b.len() / 64,
            _ => 1,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PickleError {
    #[error("truncated at byte {0}")]
    Truncated(usize),
    #[error("unsupported opcode {opcode:#04x} at byte {offset} (only plain data pickles are read)")]
    Unsupported { opcode: u8, offset: usize },
    #[error("malformed at byte {offset}: {what}")]
    Malformed { offset: usize, what: &'static str },
    #[error("over the limit of {0}")]
    Limit(&'static str),
}

/// Larger dumps than this are not flight recorder output (a 20k-entry buffer with stacks is ~100 MB).
pub const MAX_BYTES: usize = 512 << 20;
const MAX_WORK: usize = 50_000_000;
const MAX_STACK: usize = 1_000_000;

/// A pickle starts with PROTO (0x80) and a protocol number 2..=5.
pub fn looks_like_pickle(bytes: &[u8]) -> bool {
    bytes.len() > 2 && bytes[0] == 0x80 && (2..=5).contains(&bytes[1])
}

enum Slot {
    Mark,
    Value(Value),
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], PickleError> {
        let end = self.at.checked_add(n).ok_or(PickleError::Truncated(self.at))?;
        let slice = self.bytes.get(self.at..end).ok_or(PickleError::Truncated(self.at))?;
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, PickleError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, PickleError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, PickleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn len(&mut self, n: u64) -> Result<usize, PickleError> {
        usize::try_from(n).ok().filter(|n| *n <= self.bytes.len()).ok_or(PickleError::Truncated(self.at))
    }
    fn text(&mut self, n: usize) -> Result<Value, PickleError> {
        Ok(Value::Str(String::from_utf8_lossy(self.take(n)?).into_owned()))
    }
}

pub fn parse(bytes: &[u8]) -> Result<Value, PickleError> {
    if bytes.len() > MAX_BYTES {
        return Err(PickleError::Limit("512 MiB input"));
    }
    let mut r = Reader { bytes, at: 0 };
    let mut stack: Vec<Slot> = Vec::new();
    // Memoised values with their weight, so a GET that would copy too much is refused before copying.
    let mut memo: HashMap<u64, (Value, usize)> = HashMap::new();
    let mut work = 0usize;
    loop {
        let offset = r.at;
        let opcode = r.u8()?;
        work += 1;
        if work > MAX_WORK {
            return Err(PickleError::Limit("work budget"));
        }
        if stack.len() > MAX_STACK {
            return Err(PickleError::Limit("stack depth"));
        }
        let malformed = |what| PickleError::Malformed { offset, what };
        let pop_value = |stack: &mut Vec<Slot>| match stack.pop() {
            Some(Slot::Value(v)) => Ok(v),
            _ => Err(PickleError::Malformed { offset, what: "stack underflow" }),
        };
        let pop_to_mark = |stack: &mut Vec<Slot>| -> Result<Vec<Value>, PickleError> {
            let mark = stack
                .iter()
                .rposition(|s| matches!(s, Slot::Mark))
                .ok_or(PickleError::Malformed { offset, what: "no mark" })?;
            let items = stack.split_off(mark + 1);
            stack.pop();
            Ok(items.into_iter().filter_map(|s| if let Slot::Value(v) = s { Some(v) } else { None }).collect())
        };
        let push = |stack: &mut Vec<Slot>, v: Value| stack.push(Slot::Value(v));
        match opcode {
            0x80 => {
                r.u8()?;
            }
            0x95 => {
                r.u64()?;
            }
            b'.' => return pop_value(&mut stack),
            b'(' => stack.push(Slot::Mark),
            b'}' => push(&mut stack, Value::Dict(Vec::new())),
            b']' => push(&mut stack, Value::List(Vec::new())),
            b')' => push(&mut stack, Value::Tuple(Vec::new())),
            0x8f => push(&mut stack, Value::List(Vec::new())),
            b'N' => push(&mut stack, Value::None),
            0x88 => push(&mut stack, Value::Bool(true)),
            0x89 => push(&mut stack, Value::Bool(false)),
            b'J' => {
                let v = r.u32()? as i32;
                push(&mut stack, Value::Int(i64::from(v)))
            }
            b'K' => {
                let v = r.u8()?;
                push(&mut stack, Value::Int(i64::from(v)))
            }
            b'M' => {
                let v = r.u16()?;
                push(&mut stack, Value::Int(i64::from(v)))
            }
            0x8a => {
                let n = usize::from(r.u8()?);
                let b = r.take(n)?;
                let value = if n == 0 {
                    0
                } else if n <= 8 {
                    let mut a = if b[n - 1] & 0x80 != 0 { [0xffu8; 8] } else { [0u8; 8] };
                    a[..n].copy_from_slice(b);
                    i64::from_le_bytes(a)
                } else {
                    i64::MAX
                };
                push(&mut stack, Value::Int(value))
            }
            b'G' => {
                let b = r.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                push(&mut stack, Value::Float(f64::from_be_bytes(a)))
            }
            0x8c => {
                let n = usize::from(r.u8()?);
                let v = r.text(n)?;
                push(&mut stack, v)
            }
            b'X' => {
                let n = u64::from(r.u32()?);
                let n = r.len(n)?;
                let v = r.text(n)?;
                push(&mut stack, v)
            }
            0x8d => {
                let n = r.u64()?;
                let n = r.len(n)?;
                let v = r.text(n)?;
                push(&mut stack, v)
            }
            b'C' => {
                let n = usize::from(r.u8()?);
                let v = r.take(n)?.to_vec();
                push(&mut stack, Value::Bytes(v))
            }
            b'B' => {
                let n = u64::from(r.u32()?);
                let n = r.len(n)?;
                let v = r.take(n)?.to_vec();
                push(&mut stack, Value::Bytes(v))
            }
            0x8e => {
                let n = r.u64()?;
                let n = r.len(n)?;
                let v = r.take(n)?.to_vec();
                push(&mut stack, Value::Bytes(v))
            }
            b't' => {
                let items = pop_to_mark(&mut stack)?;
                push(&mut stack, Value::Tuple(items))
            }
            b'l' => {
                let items = pop_to_mark(&mut stack)?;
                push(&mut stack, Value::List(items))
            }
            0x91 => {
                let items = pop_to_mark(&mut stack)?;
                push(&mut stack, Value::List(items))
            }
            b'd' => {
                let items = pop_to_mark(&mut stack)?;
                if items.len() % 2 != 0 {
                    return Err(malformed("odd dict items"));
                }
                let mut pairs = Vec::new();
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    pairs.push((k, v));
                }
                push(&mut stack, Value::Dict(pairs))
            }
            0x85..=0x87 => {
                let n = usize::from(opcode - 0x84);
                if stack.len() < n {
                    return Err(malformed("stack underflow"));
                }
                let items = stack.split_off(stack.len() - n);
                let mut values = Vec::new();
                for item in items {
                    match item {
                        Slot::Value(v) => values.push(v),
                        Slot::Mark => return Err(malformed("mark inside tuple")),
                    }
                }
                push(&mut stack, Value::Tuple(values))
            }
            b'a' => {
                let item = pop_value(&mut stack)?;
                match stack.last_mut() {
                    Some(Slot::Value(Value::List(list))) => list.push(item),
                    _ => return Err(malformed("append to a non-list")),
                }
            }
            b'e' | 0x90 => {
                let items = pop_to_mark(&mut stack)?;
                match stack.last_mut() {
                    Some(Slot::Value(Value::List(list))) => list.extend(items),
                    _ => return Err(malformed("appends to a non-list")),
                }
            }
            b's' => {
                let value = pop_value(&mut stack)?;
                let key = pop_value(&mut stack)?;
                match stack.last_mut() {
                    Some(Slot::Value(Value::Dict(dict))) => dict.push((key, value)),
                    _ => return Err(malformed("setitem on a non-dict")),
                }
            }
            b'u' => {
                let items = pop_to_mark(&mut stack)?;
                if items.len() % 2 != 0 {
                    return Err(malformed("odd setitems"));
                }
                match stack.last_mut() {
                    Some(Slot::Value(Value::Dict(dict))) => {
                        let mut it = items.into_iter();
                        while let (Some(k), Some(v)) = (it.next(), it.next()) {
                            dict.push((k, v));
                        }
                    }
                    _ => return Err(malformed("setitems on a non-dict")),
                }
            }
            0x94 | b'q' | b'r' => {
                let index = match opcode {
                    0x94 => memo.len() as u64,
                    b'q' => u64::from(r.u8()?),
                    _ => u64::from(r.u32()?),
                };
                // Memoised containers are later mutated in place (APPENDS after MEMOIZE); the copy
                // taken here is only read back by GET for shared immutable values in practice.
                if let Some(Slot::Value(v)) = stack.last() {
                    let weight = v.weight();
                    work += weight;
                    if work > MAX_WORK {
                        return Err(PickleError::Limit("work budget"));
                    }
                    memo.insert(index, (v.clone(), weight));
                } else {
                    return Err(malformed("memoize without a value"));
                }
            }
            b'h' | b'j' => {
                let index = if opcode == b'h' { u64::from(r.u8()?) } else { u64::from(r.u32()?) };
                let (value, weight) = memo.get(&index).ok_or(malformed("memo get of an unknown index"))?;
                work += weight;
                if work > MAX_WORK {
                    return Err(PickleError::Limit("work budget"));
                }
                push(&mut stack, value.clone())
            }
            b'c' => {
                // GLOBAL "module\nname\n"
                let mut line = || -> Result<String, PickleError> {
                    let rest = r.bytes.get(r.at..).ok_or(PickleError::Truncated(r.at))?;
                    let end = rest.iter().take(256).position(|b| *b == b'\n').ok_or(PickleError::Truncated(r.at))?;
                    let text = String::from_utf8_lossy(&rest[..end]).into_owned();
                    r.at += end + 1;
                    Ok(text)
                };
                let module = line()?;
                let name = line()?;
                push(&mut stack, Value::Global(format!("{module}.{name}")))
            }
            0x93 => {
                let name = pop_value(&mut stack)?;
                let module = pop_value(&mut stack)?;
                match (module, name) {
                    (Value::Str(m), Value::Str(n)) => push(&mut stack, Value::Global(format!("{m}.{n}"))),
                    _ => return Err(malformed("stack_global without names")),
                }
            }
            b'R' => {
                let args = pop_value(&mut stack)?;
                let callable = pop_value(&mut stack)?;
                let Value::Global(name) = callable else { return Err(malformed("reduce of a non-callable")) };
                // TorchScript's specialised lists and type tags (torch/jit/_pickle.py): each returns
                // its first argument.
                const IDENTITY: &[&str] = &[
                    "torch.jit._pickle.build_intlist",
                    "torch.jit._pickle.build_doublelist",
                    "torch.jit._pickle.build_boollist",
                    "torch.jit._pickle.build_genericlist",
                    "torch.jit._pickle.restore_type_tag",
                ];
                if !IDENTITY.contains(&name.as_str()) {
                    return Err(PickleError::Unsupported { opcode, offset });
                }
                let first = match args {
                    Value::Tuple(mut items) if !items.is_empty() => items.swap_remove(0),
                    _ => return Err(malformed("builder without arguments")),
                };
                push(&mut stack, first)
            }
            b'0' => {
                stack.pop();
            }
            b'1' => {
                pop_to_mark(&mut stack)?;
            }
            b'2' => {
                let top = match stack.last() {
                    Some(Slot::Value(v)) => v,
                    _ => return Err(malformed("dup of nothing")),
                };
                work += top.weight();
                if work > MAX_WORK {
                    return Err(PickleError::Limit("work budget"));
                }
                let top = top.clone();
                push(&mut stack, top)
            }
            _ => return Err(PickleError::Unsupported { opcode, offset }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_python_dict() {
        // pickle.dumps({'a': [1, 2], 'b': ('x', None)}, protocol=4)
        let bytes = b"\x80\x04\x95\x1c\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01K\x02e\x8c\x01b\x94\x8c\x01x\x94N\x86\x94u.";
        let value = parse(bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(value.get("a"), Some(&Value::List(vec![Value::Int(1), Value::Int(2)])));
        assert_eq!(value.get("b").map(Value::render).as_deref(), Some("(x, None)"));
    }

    #[test]
    fn truncation_and_code_are_refused() {
        assert!(matches!(parse(b"\x80\x04}"), Err(PickleError::Truncated(_))));
        // os.system("ls"): a GLOBAL that is not a list builder is never called.
        assert!(matches!(
            parse(b"\x80\x02cos\nsystem\n(X\x02\x00\x00\x00lstR."),
            Err(PickleError::Unsupported { opcode: b'R', .. })
        ));
    }

    /// What torch::jit::Pickler writes for a specialised int list: GLOBAL build_intlist, REDUCE.
    #[test]
    fn torchscript_list_builders_are_read_as_their_list() {
        let bytes = b"\x80\x02ctorch.jit._pickle\nbuild_intlist\nq\x00]q\x01(K\x01K\x02e\x85q\x02Rq\x03.";
        assert_eq!(parse(bytes), Ok(Value::List(vec![Value::Int(1), Value::Int(2)])));
    }
}
