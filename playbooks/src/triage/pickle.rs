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

    /// BININT: a signed 4-byte integer.
    fn binint(&mut self) -> Result<Value, PickleError> {
        let v = self.u32()? as i32;
        Ok(Value::Int(i64::from(v)))
    }
    /// BININT1: an unsigned byte.
    fn binint1(&mut self) -> Result<Value, PickleError> {
        let v = self.u8()?;
        Ok(Value::Int(i64::from(v)))
    }
    /// BININT2: an unsigned 2-byte integer.
    fn binint2(&mut self) -> Result<Value, PickleError> {
        let v = self.u16()?;
        Ok(Value::Int(i64::from(v)))
    }
    /// LONG1: a two's complement integer of a 1-byte length; one wider than 8 bytes is read as i64::MAX.
    fn long1(&mut self) -> Result<Value, PickleError> {
        let n = usize::from(self.u8()?);
        let b = self.take(n)?;
        let value = if n == 0 {
            0
        } else if n <= 8 {
            let mut a = if b[n - 1] & 0x80 != 0 { [0xffu8; 8] } else { [0u8; 8] };
            a[..n].copy_from_slice(b);
            i64::from_le_bytes(a)
        } else {
            i64::MAX
        };
        Ok(Value::Int(value))
    }
    /// BINFLOAT: a big-endian double.
    fn binfloat(&mut self) -> Result<Value, PickleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(Value::Float(f64::from_be_bytes(a)))
    }
    /// SHORT_BINUNICODE: text of a 1-byte length.
    fn short_binunicode(&mut self) -> Result<Value, PickleError> {
        let n = usize::from(self.u8()?);
        self.text(n)
    }
    /// BINUNICODE: text of a 4-byte length.
    fn binunicode(&mut self) -> Result<Value, PickleError> {
        let n = u64::from(self.u32()?);
        let n = self.len(n)?;
        self.text(n)
    }
    /// BINUNICODE8: text of an 8-byte length.
    fn binunicode8(&mut self) -> Result<Value, PickleError> {
        let n = self.u64()?;
        let n = self.len(n)?;
        self.text(n)
    }
    /// SHORT_BINBYTES: bytes of a 1-byte length.
    fn short_binbytes(&mut self) -> Result<Value, PickleError> {
        let n = usize::from(self.u8()?);
        Ok(Value::Bytes(self.take(n)?.to_vec()))
    }
    /// BINBYTES: bytes of a 4-byte length.
    fn binbytes(&mut self) -> Result<Value, PickleError> {
        let n = u64::from(self.u32()?);
        let n = self.len(n)?;
        Ok(Value::Bytes(self.take(n)?.to_vec()))
    }
    /// BINBYTES8: bytes of an 8-byte length.
    fn binbytes8(&mut self) -> Result<Value, PickleError> {
        let n = self.u64()?;
        let n = self.len(n)?;
        Ok(Value::Bytes(self.take(n)?.to_vec()))
    }
    /// One line of GLOBAL's "module\nname\n", its newline within the next 256 bytes.
    fn line(&mut self) -> Result<String, PickleError> {
        let rest = self.bytes.get(self.at..).ok_or(PickleError::Truncated(self.at))?;
        let end = rest.iter().take(256).position(|b| *b == b'\n').ok_or(PickleError::Truncated(self.at))?;
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.at += end + 1;
        Ok(text)
    }
}

/// Work done so far: one unit per opcode plus the weight of every value copied (MEMOIZE, GET, DUP),
/// so that a small input which copies a large value over and over is stopped at [`MAX_WORK`].
struct Work(usize);

impl Work {
    fn spend(&mut self, amount: usize) -> Result<(), PickleError> {
        self.0 += amount;
        if self.0 > MAX_WORK {
            return Err(PickleError::Limit("work budget"));
        }
        Ok(())
    }
}

/// The unpickling machine of `Lib/pickletools.py`: the input, a stack of values and marks, and the memo.
struct Machine<'a> {
    reader: Reader<'a>,
    stack: Vec<Slot>,
    /// Memoised values with their weight, so a GET that would copy too much is refused before copying.
    memo: HashMap<u64, (Value, usize)>,
    work: Work,
    /// Where the opcode being run starts, for errors.
    offset: usize,
}

impl<'a> Machine<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Machine { reader: Reader { bytes, at: 0 }, stack: Vec::new(), memo: HashMap::new(), work: Work(0), offset: 0 }
    }

    /// The next opcode, if the limits on work and stack depth allow one more.
    fn next_opcode(&mut self) -> Result<u8, PickleError> {
        self.offset = self.reader.at;
        let opcode = self.reader.u8()?;
        self.work.spend(1)?;
        if self.stack.len() > MAX_STACK {
            return Err(PickleError::Limit("stack depth"));
        }
        Ok(opcode)
    }

    fn malformed(&self, what: &'static str) -> PickleError {
        PickleError::Malformed { offset: self.offset, what }
    }

    fn push(&mut self, value: Value) {
        self.stack.push(Slot::Value(value));
    }

    /// Pushes the value an opcode's argument holds (a number, text or bytes).
    fn load(&mut self, decode: fn(&mut Reader<'a>) -> Result<Value, PickleError>) -> Result<(), PickleError> {
        let value = decode(&mut self.reader)?;
        self.push(value);
        Ok(())
    }

    fn pop_value(&mut self) -> Result<Value, PickleError> {
        match self.stack.pop() {
            Some(Slot::Value(v)) => Ok(v),
            _ => Err(self.malformed("stack underflow")),
        }
    }

    /// The values above the topmost mark, and the mark, off the stack.
    fn pop_to_mark(&mut self) -> Result<Vec<Value>, PickleError> {
        let mark = self.stack.iter().rposition(|s| matches!(s, Slot::Mark)).ok_or(self.malformed("no mark"))?;
        let items = self.stack.split_off(mark + 1);
        self.stack.pop();
        Ok(items.into_iter().filter_map(|s| if let Slot::Value(v) = s { Some(v) } else { None }).collect())
    }

    /// TUPLE, LIST, FROZENSET: one container of the values above the mark.
    fn build_from_mark(&mut self, container: fn(Vec<Value>) -> Value) -> Result<(), PickleError> {
        let items = self.pop_to_mark()?;
        self.push(container(items));
        Ok(())
    }

    /// DICT: a dict of the key, value pairs above the mark.
    fn build_dict(&mut self) -> Result<(), PickleError> {
        let items = self.pop_to_mark()?;
        if items.len() % 2 != 0 {
            return Err(self.malformed("odd dict items"));
        }
        let mut pairs = Vec::new();
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            pairs.push((k, v));
        }
        self.push(Value::Dict(pairs));
        Ok(())
    }

    /// TUPLE1, TUPLE2, TUPLE3: a tuple of the top `n` values.
    fn build_small_tuple(&mut self, n: usize) -> Result<(), PickleError> {
        if self.stack.len() < n {
            return Err(self.malformed("stack underflow"));
        }
        let items = self.stack.split_off(self.stack.len() - n);
        let mut values = Vec::new();
        for item in items {
            match item {
                Slot::Value(v) => values.push(v),
                Slot::Mark => return Err(self.malformed("mark inside tuple")),
            }
        }
        self.push(Value::Tuple(values));
        Ok(())
    }

    /// APPEND: the top value onto the list below it.
    fn append(&mut self) -> Result<(), PickleError> {
        let item = self.pop_value()?;
        match self.stack.last_mut() {
            Some(Slot::Value(Value::List(list))) => list.push(item),
            _ => return Err(self.malformed("append to a non-list")),
        }
        Ok(())
    }

    /// APPENDS, ADDITEMS (sets are read as lists): the values above the mark onto the list below it.
    fn extend(&mut self) -> Result<(), PickleError> {
        let items = self.pop_to_mark()?;
        match self.stack.last_mut() {
            Some(Slot::Value(Value::List(list))) => list.extend(items),
            _ => return Err(self.malformed("appends to a non-list")),
        }
        Ok(())
    }

    /// SETITEM: the top key and value into the dict below them.
    fn set_item(&mut self) -> Result<(), PickleError> {
        let value = self.pop_value()?;
        let key = self.pop_value()?;
        match self.stack.last_mut() {
            Some(Slot::Value(Value::Dict(dict))) => dict.push((key, value)),
            _ => return Err(self.malformed("setitem on a non-dict")),
        }
        Ok(())
    }

    /// SETITEMS: the key, value pairs above the mark into the dict below it.
    fn set_items(&mut self) -> Result<(), PickleError> {
        let items = self.pop_to_mark()?;
        if items.len() % 2 != 0 {
            return Err(self.malformed("odd setitems"));
        }
        match self.stack.last_mut() {
            Some(Slot::Value(Value::Dict(dict))) => {
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    dict.push((k, v));
                }
            }
            _ => return Err(self.malformed("setitems on a non-dict")),
        }
        Ok(())
    }

    /// DUP: a copy of the top value.
    fn dup(&mut self) -> Result<(), PickleError> {
        let Some(Slot::Value(top)) = self.stack.last() else {
            return Err(self.malformed("dup of nothing"));
        };
        self.work.spend(top.weight())?;
        let top = top.clone();
        self.push(top);
        Ok(())
    }

    /// MEMOIZE, BINPUT, LONG_BINPUT: a copy of the top value into the memo.
    fn memoize(&mut self, opcode: u8) -> Result<(), PickleError> {
        let index = match opcode {
            0x94 => self.memo.len() as u64,
            b'q' => u64::from(self.reader.u8()?),
            _ => u64::from(self.reader.u32()?),
        };
        // Memoised containers are later mutated in place (APPENDS after MEMOIZE); the copy
        // taken here is only read back by GET for shared immutable values in practice.
        let Some(Slot::Value(v)) = self.stack.last() else {
            return Err(self.malformed("memoize without a value"));
        };
        let weight = v.weight();
        self.work.spend(weight)?;
        self.memo.insert(index, (v.clone(), weight));
        Ok(())
    }

    /// BINGET, LONG_BINGET: a copy of a memoised value.
    fn memo_get(&mut self, opcode: u8) -> Result<(), PickleError> {
        let index = if opcode == b'h' { u64::from(self.reader.u8()?) } else { u64::from(self.reader.u32()?) };
        let (value, weight) = self.memo.get(&index).ok_or(self.malformed("memo get of an unknown index"))?;
        self.work.spend(*weight)?;
        let value = value.clone();
        self.push(value);
        Ok(())
    }

    /// GLOBAL: a `module.name` reference from two lines of text.
    fn global(&mut self) -> Result<(), PickleError> {
        let module = self.reader.line()?;
        let name = self.reader.line()?;
        self.push(Value::Global(format!("{module}.{name}")));
        Ok(())
    }

    /// STACK_GLOBAL: a `module.name` reference from the two strings on top.
    fn stack_global(&mut self) -> Result<(), PickleError> {
        let name = self.pop_value()?;
        let module = self.pop_value()?;
        match (module, name) {
            (Value::Str(m), Value::Str(n)) => self.push(Value::Global(format!("{m}.{n}"))),
            _ => return Err(self.malformed("stack_global without names")),
        }
        Ok(())
    }

    /// REDUCE: a call, allowed only of a builder known to return its first argument unchanged.
    fn reduce(&mut self) -> Result<(), PickleError> {
        let args = self.pop_value()?;
        let callable = self.pop_value()?;
        let Value::Global(name) = callable else { return Err(self.malformed("reduce of a non-callable")) };
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
            return Err(PickleError::Unsupported { opcode: b'R', offset: self.offset });
        }
        let first = match args {
            Value::Tuple(mut items) if !items.is_empty() => items.swap_remove(0),
            _ => return Err(self.malformed("builder without arguments")),
        };
        self.push(first);
        Ok(())
    }
}

/// Runs the pickle opcode by opcode (names as in `Lib/pickletools.py`) until STOP.
pub fn parse(bytes: &[u8]) -> Result<Value, PickleError> {
    if bytes.len() > MAX_BYTES {
        return Err(PickleError::Limit("512 MiB input"));
    }
    let mut machine = Machine::new(bytes);
    loop {
        let opcode = machine.next_opcode()?;
        match opcode {
            // Framing: PROTO, FRAME; their arguments are not needed.
            0x80 => {
                machine.reader.u8()?;
            }
            0x95 => {
                machine.reader.u64()?;
            }
            b'.' => return machine.pop_value(), // STOP
            // Constants, numbers, text and bytes.
            b'N' => machine.push(Value::None),
            0x88 => machine.push(Value::Bool(true)),  // NEWTRUE
            0x89 => machine.push(Value::Bool(false)), // NEWFALSE
            b'J' => machine.load(Reader::binint)?,
            b'K' => machine.load(Reader::binint1)?,
            b'M' => machine.load(Reader::binint2)?,
            0x8a => machine.load(Reader::long1)?,
            b'G' => machine.load(Reader::binfloat)?,
            0x8c => machine.load(Reader::short_binunicode)?,
            b'X' => machine.load(Reader::binunicode)?,
            0x8d => machine.load(Reader::binunicode8)?,
            b'C' => machine.load(Reader::short_binbytes)?,
            b'B' => machine.load(Reader::binbytes)?,
            0x8e => machine.load(Reader::binbytes8)?,
            // Containers: empty ones (EMPTY_SET is read as a list), ones built from the stack, ones filled
            // in place.
            b'}' => machine.push(Value::Dict(Vec::new())),
            b']' | 0x8f => machine.push(Value::List(Vec::new())),
            b')' => machine.push(Value::Tuple(Vec::new())),
            b'(' => machine.stack.push(Slot::Mark),
            b't' => machine.build_from_mark(Value::Tuple)?,
            b'l' | 0x91 => machine.build_from_mark(Value::List)?,
            b'd' => machine.build_dict()?,
            0x85..=0x87 => machine.build_small_tuple(usize::from(opcode - 0x84))?,
            b'a' => machine.append()?,
            b'e' | 0x90 => machine.extend()?,
            b's' => machine.set_item()?,
            b'u' => machine.set_items()?,
            // Stack and memo: POP, POP_MARK, DUP, MEMOIZE and the PUTs, the GETs.
            b'0' => {
                machine.stack.pop();
            }
            b'1' => {
                machine.pop_to_mark()?;
            }
            b'2' => machine.dup()?,
            0x94 | b'q' | b'r' => machine.memoize(opcode)?,
            b'h' | b'j' => machine.memo_get(opcode)?,
            // References to Python objects, called only when known to be harmless.
            b'c' => machine.global()?,
            0x93 => machine.stack_global()?,
            b'R' => machine.reduce()?,
            _ => return Err(PickleError::Unsupported { opcode, offset: machine.offset }),
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
