//! NCCL_DEBUG logs: `host:pid:tid [dev] NCCL INFO|WARN ...` lines from many ranks and hosts, in any
//! order, with launcher prefixes (pdsh's `10.0.0.1: `) tolerated; plus `NCCL_*` settings from launcher
//! command lines (`-x NCCL_IB_GID_INDEX=3`, `export NCCL_...=`).

use std::collections::{BTreeMap, BTreeSet};

use super::analysis::Analysis;
use super::decode::wc_status;
use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Trace,
}

/// One `NCCL INFO|WARN|TRACE` line.
#[derive(Debug, Clone)]
pub struct NcclLine {
    pub line: usize,
    pub host: Option<String>,
    pub pid: Option<u64>,
    pub dev: Option<u32>,
    pub level: Level,
    /// Text after `NCCL WARN ` / `NCCL INFO `.
    pub message: String,
    pub raw: String,
    /// NCCL's source file that printed it (`transport/nvls.cc:165` before the level, NCCL 2.8+).
    pub source: Option<String>,
    /// The level carries NCCL's name ("NCCL WARN", "NCCL INFO"), as from release 2.3 on
    /// (src/include/debug.h at v2.3.5, the first release published as source); the 2.2 releases
    /// before it printed the level alone ("include/socket.h:371 WARN ...").
    pub named_level: bool,
}

impl NcclLine {
    /// A line of NCCL's quoted without its prefix (no host, pid or device; no source location).
    fn bare(line: usize, raw: &str, level: Level, message: String) -> NcclLine {
        NcclLine {
            line,
            host: None,
            pid: None,
            dev: None,
            level,
            message,
            raw: raw.to_string(),
            source: None,
            named_level: true,
        }
    }
}

/// A `NCCL_*=value` setting, from a log's "set by environment" line or a launcher command line.
#[derive(Debug, Clone)]
pub struct Setting {
    pub name: String,
    pub value: String,
    pub host: Option<String>,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Default)]
pub struct NcclLog {
    pub file: String,
    pub lines: Vec<NcclLine>,
    /// "NCCL version 2.18.5+cuda12.2" lines: (host, version, evidence).
    pub versions: Vec<(Option<String>, String, Evidence)>,
    pub settings: Vec<Setting>,
}

impl NcclLog {
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.versions.is_empty() && self.settings.is_empty()
    }

    pub fn evidence(&self, line: &NcclLine) -> Evidence {
        Evidence::new(&self.file, line.line, &line.raw)
    }
}

/// The NCCL records of one input line: a paste whose line breaks a web page or a mail turned into
/// spaces puts a whole log on one line ("[0] NCCL INFO NET/IB : No device found. [0] NCCL INFO
/// NET/Socket : Using [0]eth0:..."), each record still headed by its prefix. A line is cut before
/// every later record that carries the first one's prefix (its `[dev]`, and its `host:pid:tid` with
/// the same host), so that "two ranks' writes interleaved in one file" — a record glued to the one
/// before it, whose host token then reads otherwise — stays one record as before.
fn records(line: &str) -> Records<'_> {
    // One pass over a line of one record (nearly every line), with one searcher built for all
    // lines: the second marker is looked for after the first.
    static LEVEL: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let level = LEVEL.get_or_init(|| memchr::memmem::Finder::new(NCCL_LEVEL));
    let first = level.find(line.as_bytes());
    let second = first.and_then(|at| level.find(&line.as_bytes()[at + NCCL_LEVEL.len()..]));
    let host = match (first, second) {
        (Some(first), Some(_)) => record_start(line, first).map(|(_, host)| host),
        _ => None,
    };
    Records { rest: Some(line), host }
}

/// What follows a prefix in every record `records` cuts at: " NCCL INFO ", " NCCL WARN ", " NCCL TRACE ".
const NCCL_LEVEL: &str = " NCCL ";

/// Iterator of [`records`]. `host` is `None` for a line that is not cut (one record, or a first
/// record without NCCL's prefix), else the host of the first record's prefix (`Some(None)` for a
/// prefix without one), which every record it is cut before must carry.
struct Records<'a> {
    rest: Option<&'a str>,
    host: Option<Option<&'a str>>,
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest.take()?;
        let Some(host) = self.host else { return Some(rest) };
        let first = rest.find(NCCL_LEVEL)? + NCCL_LEVEL.len();
        let mut from = first;
        while let Some(found) = rest[from..].find(NCCL_LEVEL) {
            let marker = from + found;
            let level = &rest[marker + NCCL_LEVEL.len()..];
            if ["INFO ", "WARN ", "TRACE "].iter().any(|l| level.starts_with(l)) {
                if let Some((start, _)) = record_start(rest, marker).filter(|(s, h)| *s >= first && *h == host) {
                    self.rest = Some(&rest[start..]);
                    return Some(rest[..start].trim_end());
                }
            }
            from = marker + NCCL_LEVEL.len();
        }
        Some(rest)
    }
}

/// Where the prefix of the record whose level starts at `marker` begins, and its host: the tokens
/// before the level, read backwards, are an optional source location (`init.cc:573`), the device
/// (`[0]`), and an optional `host:pid:tid` whose host is a plain name.
fn record_start(line: &str, marker: usize) -> Option<(usize, Option<&str>)> {
    let before = &line[..marker];
    let token_before = |end: usize| -> Option<(usize, &str)> {
        let text = before[..end].trim_end();
        let start = text.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        (start < text.len()).then(|| (start, &text[start..]))
    };
    let (mut start, mut token) = token_before(before.len())?;
    if token.rsplit_once(':').is_some_and(|(file, line)| file.contains('.') && line.bytes().all(|b| b.is_ascii_digit()))
    {
        (start, token) = token_before(start)?;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(token.strip_prefix('[')?.strip_suffix(']')?) {
        return None;
    }
    let Some((host_start, host_token)) = token_before(start) else { return Some((start, None)) };
    let mut parts = host_token.split(':');
    let (Some(host), Some(pid), Some(tid), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Some((start, None));
    };
    let plain = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if plain(host) && digits(pid) && digits(tid) {
        Some((host_start, Some(host)))
    } else {
        Some((start, None))
    }
}

/// Split `... host:pid:tid [dev] ... NCCL WARN message` into its parts.
pub(super) fn parse_line(line_no: usize, raw: &str) -> Option<NcclLine> {
    let named = [(" NCCL WARN ", Level::Warn), (" NCCL INFO ", Level::Info), (" NCCL TRACE ", Level::Trace)]
        .into_iter()
        .find_map(|(m, l)| raw.find(m).map(|i| (i, (m, l))))
        .map(|(i, (m, l))| ((i, m.len()), l));
    let (marker, level) =
        named.or_else(|| old_warning_marker(raw)).or_else(|| bare_marker(raw)).or_else(|| collectives_marker(raw))?;
    let (start, len) = marker;
    // The level carries a library's name: NCCL's (2.3 on), or CCOM's, whose code is NCCL's of later
    // releases.
    let named_level = named.is_some() || raw[start..].starts_with(" CCOM ");
    let prefix = &raw[..start];
    let message = raw[start + len..].trim().to_string();
    let tokens: Vec<&str> = prefix.split_whitespace().collect();
    let mut host = None;
    let mut pid = None;
    let mut dev = None;
    for (i, token) in tokens.iter().enumerate() {
        let Some(next) = tokens.get(i + 1) else { break };
        if !next.starts_with('[') {
            continue;
        }
        let parts: Vec<&str> = token.rsplitn(3, ':').collect();
        if parts.len() == 3
            && parts[0].chars().all(|c| c.is_ascii_digit())
            && parts[1].chars().all(|c| c.is_ascii_digit())
        {
            // A host name has no colon: one that does is two ranks' writes interleaved in one file
            // ("stone:2984736:2stone:2984737:2984737 [2]"), whose first writer's host begins it
            // (the ranks writing one file run on one host).
            let name = parts[2].split(':').next().unwrap_or("");
            host = Some(name.to_string()).filter(|h| !h.is_empty());
            pid = parts[1].parse().ok();
            dev = next.trim_start_matches('[').trim_end_matches(']').parse().ok();
            break;
        }
    }
    let source = tokens
        .last()
        .filter(|t| t.rsplit_once(':').is_some_and(|(f, n)| f.contains('.') && n.chars().all(|c| c.is_ascii_digit())))
        .map(|t| t.rsplit_once(':').map_or(*t, |(f, _)| f).to_string());
    Some(NcclLine { line: line_no, host, pid, dev, level, message, raw: raw.to_string(), source, named_level })
}

/// AWS Neuron's collectives library (CCOM), NCCL's code under another name, prints NCCL's lines
/// with its own ("58091:58701 [0] bootstrap.cc:95 CCOM WARN Timeout waiting for incoming
/// connection"): its messages are NCCL's, and read as such.
fn collectives_marker(raw: &str) -> Option<((usize, usize), Level)> {
    let at = raw.find(" CCOM ")?;
    let rest = &raw[at + " CCOM ".len()..];
    let level = if rest.starts_with("WARN ") {
        Level::Warn
    } else if rest.starts_with("INFO ") {
        Level::Info
    } else {
        return None;
    };
    Some(((at, " CCOM WARN ".len()), level))
}

/// Entries of an interface or device list wrapped onto a line of their own: `[3]br-dd40dc616638:
/// 172.30.0.1<0>` (NET/Socket), or `[4]mlx5_12:1/RoCE [5]mlx5_13:1/RoCE` (NET/IB, as a document
/// wraps its long line), up to the list's end ("; OOB eth0:10.0.0.1<0>").
fn wrapped_list_entry(raw: &str) -> Option<&str> {
    let entries = raw.trim();
    let list = entries.split(';').next().unwrap_or("");
    let entry = |token: &str| {
        let Some((index, rest)) = token.strip_prefix('[').and_then(|t| t.split_once(']')) else { return false };
        !index.is_empty()
            && index.chars().all(|c| c.is_ascii_digit())
            && rest.contains(':')
            && (rest.ends_with('>') || rest.contains('/'))
    };
    let mut tokens = list.split_whitespace().peekable();
    (tokens.peek().is_some() && tokens.all(entry)).then_some(entries)
}

/// Whether an interface or device list's line leaves the list open for entries on the next lines:
/// its head alone ("NET/Socket : Using"), or NET/IB's devices without the "; OOB" that ends them.
fn list_left_open(message: &str) -> bool {
    let message = message.trim_end();
    message.ends_with("Using")
        || ((message.starts_with("NET/IB : Using") || message.starts_with("NET/IB: Using")) && !message.contains(';'))
}

/// A line that starts with the level, as posters quote a WARN without its prefix
/// ("NCCL WARN NET/IB : Got async event : port error").
fn bare_marker(raw: &str) -> Option<((usize, usize), Level)> {
    let start = raw.len() - raw.trim_start().len();
    let line = &raw[start..];
    [("NCCL WARN ", Level::Warn), ("NCCL INFO ", Level::Info)]
        .into_iter()
        .find(|(marker, _)| line.starts_with(marker))
        .map(|(marker, level)| ((start, marker.len()), level))
        // "INFO NET/Socket : Using ...": a quote cut after NCCL's prefix; the subsystem names
        // (NET/, Bootstrap) are NCCL's own.
        .or_else(|| {
            [("WARN ", Level::Warn), ("INFO ", Level::Info)]
                .into_iter()
                .find(|(marker, _)| {
                    line.strip_prefix(marker).is_some_and(|m| m.starts_with("NET/") || m.starts_with("Bootstrap :"))
                })
                .map(|(marker, level)| ((start, marker.len()), level))
        })
        // A quote cut before the level too ("NET/Socket : GPU Direct RDMA Disabled for HCA 'hsn0'",
        // "Using network Socket"): the net transports' names with NCCL's own separator, and the
        // line init.cc prints for the network it chose, are NCCL's alone.
        .or_else(|| {
            let transport = ["NET/IB :", "NET/IB:", "NET/Socket :", "NET/Socket:", "NET/Plugin", "NET/OFI "]
                .iter()
                .any(|subsystem| line.starts_with(subsystem));
            let network = line.strip_prefix("Using network ").is_some_and(|name| {
                let name = name.trim_end();
                !name.is_empty()
                    && name.split_whitespace().count() <= 2
                    && name.starts_with(|c: char| c.is_ascii_uppercase())
            });
            (transport || network).then_some(((start, 0), Level::Info))
        })
}

/// NCCL before 2.6 printed `host:pid:tid [dev] misc/ibvwrap.cu:61 WARN message`, without "NCCL":
/// a WARN right after a source location.
fn old_warning_marker(raw: &str) -> Option<((usize, usize), Level)> {
    let at = raw.find(" WARN ")?;
    let location = raw[..at].split_whitespace().last()?;
    let (file, line) = location.rsplit_once(':')?;
    (file.contains('.') && !line.is_empty() && line.chars().all(|c| c.is_ascii_digit()))
        .then_some(((at, " WARN ".len()), Level::Warn))
}

/// `NAME=value` tokens for NCCL settings on a launcher command line.
fn command_line_settings(file: &str, line_no: usize, raw: &str) -> Vec<Setting> {
    let launcher = ["mpirun", "srun", "torchrun", "python", "docker", "export ", "-x ", "--env", "env "]
        .iter()
        .any(|l| raw.contains(l));
    if !launcher {
        return Vec::new();
    }
    raw.split_whitespace()
        .filter_map(|token| {
            let token = token.trim_matches(|c| c == '"' || c == '\'' || c == '`');
            let (name, value) = token.split_once('=')?;
            let name = name.trim_start_matches("--env=");
            (name.starts_with("NCCL_")
                && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .then(|| Setting {
                name: name.to_string(),
                value: value.trim_matches(|c| c == '"' || c == '\'').to_string(),
                host: None,
                evidence: Evidence::new(file, line_no, raw),
            })
        })
        .collect()
}

/// Parse an input's NCCL lines. Never fails: lines that are not NCCL's are skipped.
pub fn parse(file: &str, text: &str) -> NcclLog {
    let mut log = NcclLog { file: file.to_string(), ..NcclLog::default() };
    // NCCL's messages without their prefix are looked for only in a paste about NCCL: matching every
    // line of a long kernel log against the whole catalogue would cost seconds for nothing.
    let about_nccl = text.contains("NCCL") || text.contains("NET/");
    let mut quote_next = false;
    // The last NCCL line was an interface list's head ("NET/Socket : Using") with nothing after it.
    let mut list_open = false;
    // A quote of NCCL's last warning that the line did not close: the lines it still may take.
    let mut quote_open = 0;
    for (line_no, raw) in numbered_lines(text).flat_map(|(line_no, line)| records(line).map(move |r| (line_no, r))) {
        if quote_open > 0 {
            quote_open -= 1;
            if let Some(last) = log.lines.last_mut() {
                let (part, closed) = match raw.find('\'') {
                    Some(close) => (&raw[..close], true),
                    None => (raw, false),
                };
                last.message.push(' ');
                last.message.push_str(part.trim());
                if closed {
                    quote_open = 0;
                }
                continue;
            }
        }
        log.settings.extend(command_line_settings(file, line_no, raw));
        let after_last_error = std::mem::take(&mut quote_next);
        let quoted = quoted_warning(raw, after_last_error).map(|(message, open)| {
            quote_open = if open { QUOTE_CONTINUATION_LINES } else { 0 };
            message
        });
        // A paste with a blank line between every two lines puts one between "Last error:" and
        // the message it introduces.
        quote_next = raw.trim_end().ends_with("Last error:") || (after_last_error && raw.trim().is_empty());
        let list_was_open = std::mem::take(&mut list_open);
        if let Some(message) = quoted {
            log.lines.push(NcclLine::bare(line_no, raw, Level::Warn, message));
        } else if let Some(entry) = list_was_open.then(|| wrapped_list_entry(raw)).flatten() {
            // "NET/Socket : Using" with its interfaces one per line below it, as a poster wrapped
            // the list: the entries belong to that line.
            if let Some(last) = log.lines.last_mut() {
                last.message.push(' ');
                last.message.push_str(entry);
                // The list ends with the entry that carries its "; OOB".
                list_open = !entry.contains(';');
            }
            continue;
        } else if let Some(line) = parse_line(line_no, raw) {
            list_open = list_left_open(&line.message);
            if list_open {
                log.lines.push(line);
                continue;
            }
            if let Some(version) = line.message.strip_prefix("NCCL version ") {
                let version = version.split_whitespace().next().unwrap_or("").to_string();
                log.versions.push((line.host.clone(), version, Evidence::new(file, line_no, raw)));
            }
            // "NCCL_IB_HCA set by environment to mlx5_1", and the shorter "NCCL_IB_HCA set to
            // mlx5_1" of the settings NCCL echoes as it reads them.
            if let Some((name, value)) =
                line.message.split_once(" set by environment to ").or_else(|| line.message.split_once(" set to "))
            {
                let name = name.trim();
                if name.starts_with("NCCL_") {
                    log.settings.push(Setting {
                        name: name.to_string(),
                        value: value.trim().trim_end_matches('.').to_string(),
                        host: line.host.clone(),
                        evidence: Evidence::new(file, line_no, raw),
                    });
                }
            }
            log.lines.push(line);
        } else if let Some(message) = bare_channel(raw) {
            log.lines.push(NcclLine::bare(line_no, raw, Level::Info, message));
        } else if let Some(version) = raw.trim().strip_prefix("NCCL version ") {
            let version = version.split_whitespace().next().unwrap_or("").to_string();
            log.versions.push((None, version, Evidence::new(file, line_no, raw)));
        } else if about_nccl && newer_than_the_catalogue(raw) {
            log.lines.push(NcclLine::bare(line_no, raw, Level::Warn, raw.trim().to_string()));
        } else if let Some(entry) = about_nccl.then(|| super::catalogue::untagged(raw)).flatten() {
            // NCCL's message pasted without its prefix and level: read as the line it was.
            let message = raw.trim().to_string();
            list_open = list_left_open(&message);
            let level = if entry.level == "WARN" { Level::Warn } else { Level::Info };
            log.lines.push(NcclLine::bare(line_no, raw, level, message));
        }
    }
    log
}

/// NCCL's warnings pasted without their prefix in the wording of releases newer than the catalogue's
/// last tag (v2.30.7): 2.31's enqueue.cc names the symmetric kernels too ("No algorithm/protocol nor
/// symKernelId available for function Broadcast with datatype ncclInt8.", vllm-project/vllm#58179).
fn newer_than_the_catalogue(raw: &str) -> bool {
    raw.trim_start().starts_with("No algorithm/protocol nor symKernelId available")
}

/// A channel connection quoted without its prefix ("9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA"):
/// NCCL's own format (transport/net.cc), read as the INFO line it was, with an unknown channel.
fn bare_channel(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    let (from, rest) = trimmed.split_once(" -> ")?;
    let rank = from.split('[').next()?;
    let well_formed = !rank.is_empty()
        && rank.chars().all(|c| c.is_ascii_digit())
        && from.ends_with(']')
        && (rest.contains("[send]") || rest.contains("[receive]"))
        && rest.contains(" via ");
    well_formed.then(|| format!("Channel ? : {trimmed}"))
}

/// NCCL's last warning as a caller quotes it, without NCCL's own log: PyTorch's `DistBackendError`
/// prints `Last error:` and the message on the next line (c10d `NCCLUtils.hpp`, from
/// `ncclGetLastError`), or on the same line; XLA/JAX prints `Last NCCL warning(error): '...'`.
/// The message is read as the WARN line it was.
fn quoted_warning(raw: &str, after_last_error: bool) -> Option<(String, bool)> {
    let trimmed = raw.trim();
    let mut open_quote = false;
    let message = if let Some((_, rest)) = raw.split_once("Last NCCL warning(error)") {
        // `Last NCCL warning(error): '...'`, or newer XLA's `Last NCCL warning(error) log entry
        // (may be unrelated) '...'`: the quoted message, which a terminal may have wrapped onto
        // the next lines (the quote then closes on a later line).
        let rest = rest.trim();
        match (rest.find('\''), rest.rfind('\'')) {
            (Some(open), Some(close)) if close > open => rest[open + 1..close].to_string(),
            (Some(open), _) => {
                open_quote = true;
                rest[open + 1..].trim().to_string()
            }
            _ => rest.trim_start_matches(':').trim().to_string(),
        }
    } else if let Some((_, rest)) = raw.split_once("Last error: ") {
        rest.trim().to_string()
    } else if after_last_error && !trimmed.is_empty() && !trimmed.contains(" NCCL ") {
        trimmed.to_string()
    } else {
        return None;
    };
    (!message.is_empty() || open_quote).then_some((message, open_quote))
}

/// Lines a wrapped quote of NCCL's last warning may take after its first.
const QUOTE_CONTINUATION_LINES: usize = 6;

/// The number after `key ` in `text` ("rank 3" -> 3), case-insensitive on the key.
fn number_after(text: &str, key: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let key = format!("{} ", key.to_ascii_lowercase());
    let mut from = 0;
    while let Some(i) = lower[from..].find(&key) {
        let at = from + i;
        let boundary = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
        let rest = &text[at + key.len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if boundary && !digits.is_empty() {
            return digits.parse().ok();
        }
        from = at + key.len();
    }
    None
}

/// The word after `key ` in `text`.
fn word_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(&format!("{key} "))?;
    text[at + key.len() + 1..].split_whitespace().next()
}

/// `[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ...` or `eth0:10.0.0.1<0>` interface lists.
fn using_list(message: &str) -> Vec<String> {
    let Some(after) = message.split_once("Using").map(|(_, a)| a) else {
        return Vec::new();
    };
    let list = after.split(';').next().unwrap_or("");
    list.split_whitespace()
        .map(|t| {
            let t = t.trim_start_matches(':').trim();
            match t.find(']') {
                Some(i) if t.starts_with('[') => &t[i + 1..],
                _ => t,
            }
        })
        // NCCL before 2.4 printed "NET : Using interface lo:127.0.0.1<0>", one line per interface.
        .filter(|t| !t.is_empty() && *t != "interface")
        .map(str::to_string)
        .collect()
}

/// An inter-node channel connection: `Channel 02/0 : 7[7] -> 8[0] [send] via NET/IB/1/GDRDMA`.
#[derive(Debug, Clone)]
pub struct NetChannel {
    pub channel: String,
    pub from: u64,
    pub to: u64,
    pub send: bool,
    pub nic_index: u32,
    /// `.../GDRDMA`: the NIC reads or writes GPU memory directly (GPUDirect RDMA).
    pub gdr: bool,
    pub host: Option<String>,
    pub evidence: Evidence,
}

impl NetChannel {
    /// The rank that printed the line: the sender of a `[send]` connection, the receiver of a
    /// `[receive]` one (transport/net.cc logs each side's own connection).
    pub fn owner(&self) -> u64 {
        if self.send {
            self.from
        } else {
            self.to
        }
    }
}

fn net_channel(log: &NcclLog, line: &NcclLine) -> Option<NetChannel> {
    let message = &line.message;
    let rest = message.strip_prefix("Channel ").or_else(|| message.strip_prefix("Ring "))?;
    let (channel, rest) = rest.split_once(" : ")?;
    let (from, rest) = rest.split_once(" -> ")?;
    let from: u64 = from.split('[').next()?.trim().parse().ok()?;
    let to_text = rest.split_whitespace().next()?;
    let to: u64 = to_text.split('[').next()?.trim().parse().ok()?;
    let send = if rest.contains("[send]") {
        true
    } else if rest.contains("[receive]") {
        false
    } else {
        return None;
    };
    let via = rest.split_once("via NET/")?.1;
    let gdr = via.split_whitespace().next().is_some_and(|path| path.split('/').any(|part| part == "GDRDMA"));
    let mut parts = via.split('/');
    let _transport = parts.next()?;
    let index_text = parts.next()?;
    let nic_index = index_text.split('(').next()?.parse().ok()?;
    Some(NetChannel {
        channel: channel.trim().to_string(),
        from,
        to,
        send,
        nic_index,
        gdr,
        host: line.host.clone(),
        evidence: log.evidence(line),
    })
}

/// Interfaces that are rarely the one ranks can reach each other on: container bridges, loopback,
/// tunnels and virtual links. NCCL picks interfaces by prefix unless NCCL_SOCKET_IFNAME says otherwise
/// (NCCL docs, "NCCL_SOCKET_IFNAME"), and by default excludes only lo and docker*.
fn is_suspect_interface(name: &str) -> bool {
    ["docker", "lo", "virbr", "veth", "cni", "flannel", "tunl", "br-", "vxlan", "kube", "cali", "weave", "tailscale"]
        .iter()
        .any(|p| name == "lo" || (*p != "lo" && name.starts_with(p)))
}

/// Communicator (commId, or "nranks N" for logs without one) -> its size and, per rank, whether it
/// logged Init START and Init COMPLETE.
type Communicators = BTreeMap<String, (u64, BTreeMap<u64, (bool, bool)>)>;

/// commId (or "of N ranks" for lines without one) -> (host, busId) -> the ranks of that
/// communicator that started there, each with its process id and line.
type CommunicatorGpus = BTreeMap<String, BTreeMap<(String, String), BTreeMap<u64, (Option<u64>, Evidence)>>>;

/// An interface and its address as NCCL's bootstrap or its socket transport lists it
/// ("[0]eth0:10.0.0.1<0>"), and the line that says so.
#[derive(Debug)]
struct ListedInterface {
    iface: String,
    address: String,
    evidence: Evidence,
}

/// The interfaces a host's socket transport lists, each with its address and the line that says
/// so: "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]lo:127.0.0.1<0>", or before NCCL 2.4 one
/// "NET : Using interface lo:127.0.0.1<0>" line each. Every listing is kept (an address on two
/// hosts' lists is judged over all of them); a channel's "via NET/Socket/N" indexes the last
/// "NET/Socket : Using" listing, which starts at `last_listing`.
#[derive(Debug, Default)]
struct SocketTransport {
    listed: Vec<ListedInterface>,
    last_listing: usize,
}

/// What the logs say that is only judged once all of them are read: versions, drivers and settings
/// to compare across hosts, communicator membership, and the NICs behind the inter-node channels.
#[derive(Debug, Default)]
struct Observations {
    /// Collective calls as NCCL_DEBUG_SUBSYS=COLL logs them, by communicator size and operation
    /// count, with the process that made each.
    calls: BTreeMap<(u64, String), Vec<LoggedCall>>,
    /// The communicators (their addresses in the process) each process logged calls on.
    call_comms: BTreeMap<Process, BTreeSet<String>>,
    /// Hosts where a rank's proxy thread failed an operation.
    proxy_failed: BTreeSet<String>,
    /// Hosts where a rank failed to connect to a peer (refused, timed out, no route).
    connect_failed: BTreeSet<String>,
    /// `nccl.ib_hca_mixed` facts with the RoCE ports' indexes in the host's list, kept until the
    /// input says whether the job spans hosts and which ports its connections use.
    mixed_fabrics: Vec<(Fact, Vec<u32>)>,
    versions: BTreeMap<String, Vec<Evidence>>,
    drivers: BTreeMap<String, Vec<Evidence>>,
    /// Setting name -> value -> where it was set.
    settings: BTreeMap<String, BTreeMap<String, Vec<Evidence>>>,
    comms: Communicators,
    comm_gpus: CommunicatorGpus,
    /// Host -> the Docker default-bridge interface its bootstrap uses, and the line.
    docker_bridges: BTreeMap<String, (String, Evidence)>,
    /// Host -> the interface and address its bootstrap uses ("Bootstrap : Using
    /// ens3:172.16.0.16<0>"), and the line.
    bootstraps: BTreeMap<String, ListedInterface>,
    channels: Vec<NetChannel>,
    /// Host -> its NET/IB devices, in NCCL's index order.
    host_nics: BTreeMap<String, Vec<String>>,
    /// Every host that printed a line.
    hosts: BTreeSet<String>,
    /// Ranks that printed a channel connection line (the sending rank of "Channel 00 : 1[1] -> 0[0]").
    channel_sources: BTreeSet<u64>,
    /// The connections of those lines: sender, receiver, and whether the transport stays inside
    /// one host (P2P, SHM), with the first line that named each pair.
    channel_links: Vec<ChannelLink>,
    /// The (sender, receiver) pairs of `channel_links`, each kept once.
    channel_pairs: BTreeSet<(u64, u64)>,
    /// The ranks of each ring rank 0 printed ("Channel 00/02 :    0   1"), as sets: every rank of
    /// the communicator is on every ring.
    ring_members: BTreeSet<BTreeSet<u64>>,
    /// Host -> the interfaces and addresses its socket transport lists.
    socket_transports: BTreeMap<String, SocketTransport>,
    /// Host -> the out-of-band (bootstrap) interface its NET/IB line names ("OOB ibp75s0:...").
    oob_interfaces: BTreeMap<String, (String, Evidence)>,
    /// Host -> the first failed call in NCCL's bootstrap (an INFO trace "bootstrap.cc:270 -> 2"):
    /// whether it was the socket layer's (misc/socket.cc: a connect, accept or send), whether a
    /// bootstrap.cc trace came after it (the socket was the bootstrap's own), and the line.
    bootstrap_failures: BTreeMap<String, BootstrapFailure>,
    /// Hosts already reported for a channel over a suspect socket interface.
    suspect_channel: BTreeSet<String>,
    /// Hosts already reported as RoCE from a GID NCCL printed.
    roce_from_gid: BTreeSet<String>,
    /// An RDMA net plugin was loaded.
    rdma_plugin: bool,
    /// The first rank whose tree has two children or more ("Trees [0] 1/8/-1->0->-1"), and the
    /// line: inside a host a tree is a chain, so only a tree that joins hosts has them.
    tree_across_hosts: Option<(u64, Evidence)>,
    /// Where NCCL said "NET/IB : No device found".
    ib_not_used: Vec<(String, Evidence)>,
    /// Where NCCL said it chose its socket transport as the network ("Using network Socket").
    socket_network: Option<Evidence>,
    /// The devices NCCL's socket transport named in its GPUDirect line ("NET/Socket : GPU Direct
    /// RDMA Disabled for HCA 0 'hsn0'"), with the line.
    socket_devices: Vec<(String, Evidence)>,
    /// NCCL's own word that a GPU and a NIC are too far apart for GPUDirect RDMA (graph/paths.cc:
    /// "GPU Direct RDMA Disabled for GPU 2[2] / HCA 0 (distance 3 >= 2)"): host, NIC, where.
    gdr_too_far: Vec<(String, String, Evidence)>,
    /// NCCL said GPUDirect RDMA is enabled for some GPU and NIC ("GPU Direct RDMA Enabled for GPU
    /// 0 / HCA 0", graph/paths.cc; "GPU Direct RDMA Enabled for HCA 0 'mlx5_0'", net_ib.cc).
    gdr_enabled: bool,
    /// Host -> the net plugin it loaded ("internal" when it found none), with where it said so.
    net_plugins: BTreeMap<String, (String, Evidence)>,
    /// (host, device) -> its port events in order: true for "port active", false for "port error".
    port_events: BTreeMap<(String, String), Vec<(bool, Evidence)>>,
    /// Where NCCL (2.19 and later) counted the communicator's nodes as one ("nRanks 4 nNodes 1
    /// localRanks 4").
    one_node: Option<(String, Evidence)>,
    /// Host -> its socket connects that were refused and retried.
    refused_retries: BTreeMap<String, Vec<Evidence>>,
    /// Where NCCL said it loads a topology file rather than detecting the machine ("Loading
    /// topology file /path", "NCCL_TOPO_FILE set by environment to ...").
    topology_file: Option<Evidence>,
    /// (host, GPU, peer GPU) -> the NVLink bandwidth of that path in the topology NCCL printed
    /// (graph/paths.cc: "GPU/0-17000 :... GPU/0-65000 (1/240.0/NVL)"), with its line.
    nvlink_paths: BTreeMap<(String, String, String), (String, Evidence)>,
}

/// Facts from the NCCL logs of all inputs, joined across them.
pub fn analyze(logs: &[NcclLog], analysis: &mut Analysis) {
    let mut seen = Observations::default();
    // Hosts whose NCCL lines name no level the way NCCL 2.3 and later do, with the first such line.
    let mut before_2_3: BTreeMap<&str, Evidence> = BTreeMap::new();
    for log in logs {
        for (_, version, evidence) in &log.versions {
            seen.versions.entry(version.clone()).or_default().push(evidence.clone());
        }
        record_settings(log, &mut seen.settings, analysis);
        for line in &log.lines {
            if let (false, Some(host)) = (line.named_level, &line.host) {
                before_2_3.entry(host).or_insert_with(|| log.evidence(line));
            }
            observe_line(log, line, &mut seen, analysis);
        }
    }
    mismatch_fact(analysis, "nccl.version_mismatch", "NCCL version", &seen.versions);
    if seen.versions.len() < 2 && !before_2_3.is_empty() {
        versions_by_line_form(logs, &before_2_3, analysis);
    }
    mismatch_fact(analysis, "nccl.driver_mismatch", "CUDA driver", &seen.drivers);
    env_mismatch(&seen.settings, analysis);
    rank_nics(&seen.channels, &seen.host_nics, analysis);
    missing_ranks(&seen.comms, &seen.channel_sources, &seen.channel_links, analysis);
    shared_gpus(&seen.comm_gpus, analysis);
    single_host(&seen, analysis);
    mixed_fabrics(&mut seen, analysis);
    calls_that_differ(&seen, analysis);
    topology_file_nvlinks_one_way(&seen, analysis);
    refused_again_and_again(&seen, analysis);
    cross_nic(&seen.channels, &seen.host_nics, analysis);
    ib_expected_but_missing(&seen, analysis);
    devices_left_open(&seen, analysis);
    if seen.ib_not_used.is_empty() {
        sockets_beside_an_rdma_plugin(&seen, analysis);
    }
    sockets_over_slingshot(&seen, analysis);
    gdr_partial(&seen.channels, analysis);
    gdr_off_across_sockets(&seen.channels, &seen.gdr_too_far, seen.gdr_enabled, analysis);
    plugin_mismatch(&seen.net_plugins, analysis);
    port_flaps(&seen.port_events, analysis);
    forced_protocol(&seen.settings, analysis);
    failed_bootstraps(&seen, analysis);
    garbled_peer_addresses(&seen, analysis);
    graph_capture_build(&seen, analysis);
    peers_on_docker_networks(&seen, analysis);
    one_address_on_two_hosts(&seen, analysis);
}

/// Two hosts whose bootstraps use the same address ("Bootstrap : Using [0]eth0:172.17.0.2<0>" in a
/// container on each of two machines, both on Docker's default bridge; or loopback): an address
/// that two hosts hold is one neither can be reached at by the other, so the ranks' connections
/// between the hosts go nowhere (NVIDIA/nccl#367). So is one in two hosts' socket transport lists:
/// the transport spreads its channels over every listed interface (transport/net_socket.cc), and a
/// peer's connection to the shared address stays on the host that makes it.
fn one_address_on_two_hosts(seen: &Observations, analysis: &mut Analysis) {
    fn shared<'a>(
        named: impl Iterator<Item = (&'a str, Vec<&'a ListedInterface>)>,
    ) -> Option<(&'a str, Vec<(&'a str, &'a ListedInterface)>)> {
        let mut hosts_of: BTreeMap<&str, Vec<(&str, &ListedInterface)>> = BTreeMap::new();
        for (host, interfaces) in named {
            let mut addresses = BTreeSet::new();
            for interface in
                interfaces.into_iter().filter(|i| !i.address.is_empty() && addresses.insert(i.address.as_str()))
            {
                hosts_of.entry(interface.address.as_str()).or_default().push((host, interface));
            }
        }
        hosts_of.into_iter().find(|(_, hosts)| hosts.len() >= 2)
    }
    let bootstraps = seen.bootstraps.iter().map(|(host, b)| (host.as_str(), vec![b]));
    let transports = seen.socket_transports.iter().map(|(host, t)| (host.as_str(), t.listed.iter().collect()));
    let (used_by, (address, hosts)) = match (shared(bootstraps), shared(transports)) {
        (Some(found), _) => ("bootstrap", found),
        (None, Some(found)) => ("socket transport", found),
        (None, None) => return,
    };
    let names: Vec<&str> = hosts.iter().map(|(host, _)| *host).collect();
    let (host, first) = hosts[0];
    let fact = Fact::new("nccl.socket_iface_suspect")
        .host(host)
        .attr("iface", format!("{}:{address}", first.iface))
        .attr("used_by", format!("{used_by} (the same address {address} on {})", names.join(" and ")))
        .attr("same_address", "yes")
        .evidence(first.evidence.clone())
        .evidence(hosts[1].1.evidence.clone());
    analysis.push(fact);
}

/// The gateway address of a Docker network (172.17.0.1 to 172.31.0.1: the default address pools
/// of dockerd, one /16 each, the host's own address on the bridge being .0.1), as the second
/// octet when the address is one.
pub(super) fn docker_gateway(address: &str) -> Option<u8> {
    let octets: Vec<u8> = address.split('.').map(|o| o.parse().ok()).collect::<Option<Vec<u8>>>()?;
    match octets.as_slice() {
        [172, second @ 17..=31, 0, 1] => Some(*second),
        _ => None,
    }
}

/// An address in one of dockerd's default local address pools for bridge networks, 172.17.0.0/16
/// to 172.31.0.0/16 (moby's libnetwork ipamutils, localScopeDefaultNetworks): a container's own
/// address on a bridge that exists only on its host.
fn docker_pool_address(address: &str) -> bool {
    // NCCL prints the address with its port or scope after it ("172.18.0.2<0>").
    let address = address.split('<').next().unwrap_or(address);
    let octets: Option<Vec<u8>> = address.split('.').map(|o| o.parse().ok()).collect();
    matches!(octets.as_deref(), Some([172, 17..=31, _, _]))
}

/// A connection towards a peer's address that is a Docker network's gateway, from a host whose
/// own bootstrap address is on no such network: the peer advertised the address of its bridge
/// (its bootstrap or socket interface picked `docker0` or a `br-...` network first), which only
/// that peer's own containers can reach.
fn peers_on_docker_networks(seen: &Observations, analysis: &mut Analysis) {
    let suspect = analysis.facts.iter().filter(|f| f.name == "nccl.socket_connect_failed").find_map(|fact| {
        let error = fact.get("error")?;
        let peer = error.split("Connect to ").nth(1)?.split(['<', ' ', ':']).next()?;
        let network = docker_gateway(peer)?;
        let host = fact.get("host").unwrap_or(crate::fact::UNKNOWN_HOST);
        let own = &seen.bootstraps.get(host)?.address;
        if own.starts_with(&format!("172.{network}.")) {
            return None;
        }
        let mut suspect = Fact::new("nccl.socket_iface_suspect")
            .host(host)
            .attr("iface", format!("the peer's Docker network ({peer})"))
            .attr("used_by", "bootstrap");
        for evidence in &fact.evidence {
            suspect = suspect.evidence(evidence.clone());
        }
        Some(suspect)
    });
    if let Some(suspect) = suspect {
        analysis.push(suspect);
    }
}

/// NCCL refuses CUDA graph capture "if either it wasn't built with CUDA runtime >= 11.3 or if the
/// installed CUDA driver < R465" (src/misc/strongstream.cc). Which of the two it was is in the
/// same log: the build's CUDA in "NCCL version 2.20.5+cuda11.0" and the driver in
/// "cudaDriverVersion 11080" (R465 is CUDA 11.3's driver). A driver that is new enough leaves the
/// build: an NCCL built for CUDA before 11.3 (a cu11 wheel of CUDA 11.0), which is NCCL's build
/// not matching its use, not a driver older than the runtime.
fn graph_capture_build(seen: &Observations, analysis: &mut Analysis) {
    let cuda = |text: &str| -> Option<(u32, u32)> {
        let (major, minor) = text.split_once('.')?;
        Some((major.parse().ok()?, minor.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?))
    };
    let old_build = seen
        .versions
        .iter()
        .find(|(version, _)| version.split("+cuda").nth(1).and_then(cuda).is_some_and(|v| v < (11, 3)));
    let drivers: Vec<u32> = seen.drivers.keys().filter_map(|d| d.parse().ok()).collect();
    let driver_new_enough = !drivers.is_empty() && drivers.iter().all(|d| *d >= 11030);
    let Some((build, build_evidence)) = old_build.filter(|_| driver_new_enough) else { return };
    for fact in analysis.facts.iter_mut() {
        if fact.name == "nccl.cuda_version" && fact.get("text").is_some_and(|t| t.contains("captured in a graph")) {
            fact.name = "nccl.internal".to_string();
            let text = format!(
                "NCCL {build} was built with a CUDA before 11.3 and cannot be captured in a CUDA graph; the driver ({}) is new enough",
                drivers.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            );
            fact.attrs.insert("text".to_string(), text);
            if let Some(evidence) = build_evidence.first() {
                fact.evidence.push(evidence.clone());
            }
        }
    }
}

/// NCCL's return-code trace: NCCLCHECK prints "file.cc:LINE -> CODE" at INFO for every call that
/// failed (src/include/checks.h), CODE an ncclResult_t (2 system error, 3 internal, 5 invalid
/// usage, 6 remote error). The file and the code, or `None` for any other message.
fn failed_call(message: &str) -> Option<(&str, u32)> {
    let (place, code) = message.trim().split_once(" -> ")?;
    // SYSCHECK's trace adds the call's strerror ("misc/socket.cc:505 -> 2 (Operation now in
    // progress)", include/checks.h); the other traces end at the code.
    let (code, reason) = code.trim().split_once(' ').unwrap_or((code.trim(), ""));
    if !(reason.is_empty() || reason.starts_with('(')) {
        return None;
    }
    let code: u32 = code.parse().ok()?;
    let (file, line) = place.rsplit_once(':')?;
    let source = [".cc", ".cu", ".h", ".cpp"].iter().any(|e| file.ends_with(e));
    (source && code != 0 && line.chars().all(|c| c.is_ascii_digit())).then_some((file, code))
}

/// Every host whose bootstrap (or socket layer) failed, and the interface that explains it where
/// one does: a container's address on a Docker bridge network, or IPoIB as the out-of-band
/// interface. NCCL prefers `ib*` interfaces for its bootstrap sockets (NCCL docs,
/// NCCL_SOCKET_IFNAME: "ib" interfaces first), so a host with IPoIB up but not routed to the other
/// hosts (another subnet, or no IP on their side) fails the bootstrap there although its Ethernet
/// would have worked.
/// "connecting to address with family 33621 is neither AF_INET(2) nor AF_INET6(10)": NCCL dialled
/// an address of no family. Where the host's own bootstrap found an interface and its address
/// ("Bootstrap : Using ens7:172.27.32.104"), the address did not come from this host's interface
/// choice: it arrived garbled from a peer, NCCL's bootstrap exchange broke (ranks of different
/// builds, nccl-tests#294). Without that line, an interface that does not exist left it unset
/// (nccl#1837: NCCL_SOCKET_IFNAME naming a missing interface), as read first.
fn garbled_peer_addresses(seen: &Observations, analysis: &mut Analysis) {
    for fact in analysis.facts.iter_mut() {
        let garbled = fact.name == "nccl.socket_iface_suspect"
            && fact.get("text").is_some_and(|text| text.to_ascii_lowercase().contains("neither af_inet"));
        let Some(address) =
            fact.get("host").and_then(|host| seen.bootstraps.get(host)).map(|b| &b.address).filter(|_| garbled)
        else {
            continue;
        };
        let text = format!(
            "a peer's address arrived garbled in NCCL's bootstrap exchange although this host's bootstrap uses {address} ({})",
            fact.get("text").unwrap_or_default()
        );
        fact.name = "nccl.internal".to_string();
        fact.attrs.remove("iface");
        fact.attrs.insert("text".to_string(), text);
    }
}

/// The first failed call of NCCL's bootstrap on a host (see `Observations::bootstrap_failures`).
#[derive(Debug)]
struct BootstrapFailure {
    socket: bool,
    through_bootstrap: bool,
    first: Evidence,
}

fn failed_bootstraps(seen: &Observations, analysis: &mut Analysis) {
    for (host, BootstrapFailure { socket, through_bootstrap, first: failure }) in &seen.bootstrap_failures {
        // A trace that begins in the socket layer and climbs through bootstrap.cc is the
        // bootstrap's own connection failing (socketPollConnect's SYSCHECK "misc/socket.cc:505 -> 2
        // (Operation now in progress)", then "bootstrap.cc:275 -> 2": the connect to the root's
        // address never completed, pytorch/pytorch#131781); one that begins in bootstrap.cc is the
        // exchange over a connection made, and a socket trace without bootstrap.cc above it is
        // another socket's (the proxy's, a transport's).
        let call = match (socket, through_bootstrap) {
            (true, true) => "connect",
            (true, false) => "socket",
            (false, _) => "bootstrap",
        };
        analysis.push(Fact::new("nccl.bootstrap_failed").host(host).attr("call", call).evidence(failure.clone()));
        let docker = seen
            .docker_bridges
            .get(host)
            .map(|(iface, named)| (iface, named, "bootstrap (a container's address on a Docker bridge network)"));
        let ipoib = seen
            .oob_interfaces
            .get(host)
            .filter(|(iface, _)| iface.starts_with("ib"))
            .map(|(iface, named)| (iface, named, "bootstrap (NCCL prefers IPoIB interfaces for it)"));
        // An IPv6 link-local address (fe80::/10, RFC 4291 §2.5.6) is valid only on its own link
        // and only with its scope: a bootstrap bound there ("Using ib0:fe80::...%ib0") is reached
        // by no host on another link, and a bind to it fails where the scope is lost.
        let link_local = seen
            .bootstraps
            .get(host)
            .filter(|bootstrap| bootstrap.address.to_ascii_lowercase().starts_with("fe80:"))
            .map(|bootstrap| {
                (bootstrap.iface.clone(), bootstrap.evidence.clone(), "bootstrap (an IPv6 link-local address)")
            });
        let listed = docker
            .into_iter()
            .chain(ipoib)
            .map(|(iface, named, used_by)| (iface.clone(), named.clone(), used_by))
            .chain(link_local);
        for (iface, named, used_by) in listed {
            analysis.push(
                Fact::new("nccl.socket_iface_suspect")
                    .host(host)
                    .attr("iface", iface)
                    .attr("used_by", used_by)
                    .evidence(named.clone())
                    .evidence(failure.clone()),
            );
        }
    }
}

/// A port that reported an error and then became active again (or the reverse, more than once)
/// flapped: the same fact the kernel's carrier messages give.
fn port_flaps(events: &BTreeMap<(String, String), Vec<(bool, Evidence)>>, analysis: &mut Analysis) {
    for ((host, device), events) in events {
        let changes = events.windows(2).filter(|pair| pair[0].0 != pair[1].0).count();
        let downs = events.iter().filter(|(active, _)| !active).count();
        if changes == 0 || downs == 0 {
            continue;
        }
        let mut fact = Fact::new("link.flap").host(host).attr("nic", device).attr("count", downs);
        for (_, evidence) in events.iter().take(6) {
            fact = fact.evidence(evidence.clone());
        }
        analysis.push(fact);
    }
}

/// NCCL_PROTO=LL128 (or LL) forced where NCCL would not pick it, with wrong results: NCCL's
/// maintainers warn that LL128 is only correct where NCCL enables it itself (the platform must
/// keep 128-byte stores ordered), so the setting, not the fabric, is the first suspect.
fn forced_protocol(settings: &BTreeMap<String, BTreeMap<String, Vec<Evidence>>>, analysis: &mut Analysis) {
    let corrupted = analysis.facts.iter().any(|f| f.name == "nccltests.wrong" || f.name == "nccltests.out_of_bounds");
    let Some(values) = settings.get("NCCL_PROTO") else { return };
    for (value, places) in values {
        if !value.split(',').any(|p| p.trim().eq_ignore_ascii_case("ll128") || p.trim().eq_ignore_ascii_case("ll")) {
            continue;
        }
        let mut fact = Fact::new("nccl.protocol_forced").attr("text", format!("NCCL_PROTO={value}"));
        if corrupted {
            fact = fact.attr("with", "wrong_results");
        }
        for evidence in places.iter().take(2) {
            fact = fact.evidence(evidence.clone());
        }
        analysis.push(fact);
    }
}

/// No InfiniBand/RoCE connection uses GPUDirect RDMA (`via NET/IBext_v8/0`, never `/GDRDMA`) on a
/// node whose `nvidia-smi topo -m` puts every NIC SYS from the GPU (on the other CPU socket): NCCL
/// uses GPUDirect RDMA only up to NCCL_NET_GDR_LEVEL (PXB by default, src/transport/net.cc's GDR
/// level), so every transfer is staged through host memory across the socket link
/// (nccl-tests#293: 1.1 GB/s on an HDR NIC). NCCL's own "GPU Direct RDMA Disabled for GPU ... /
/// HCA ... (distance 3 >= 2)" says the same without a topology (Mellanox/nv_peer_memory#56).
fn gdr_off_across_sockets(
    channels: &[NetChannel],
    too_far: &[(String, String, Evidence)],
    gdr_enabled: bool,
    analysis: &mut Analysis,
) {
    let rdma: Vec<&NetChannel> = channels.iter().filter(|c| c.evidence.text.contains("via NET/IB")).collect();
    let warned = || analysis.facts.iter().flat_map(|f| f.evidence.iter()).any(|e| e.text.contains(" WARN "));
    // A paste of NCCL's distance message without any channel line (nccl#1151): NCCL's own word is
    // that GPUDirect RDMA is off for that GPU and NIC, and nothing in the log says it is on for
    // another pair. Where NCCL warned of a failure, the failure is what to read.
    if channels.is_empty() && !gdr_enabled && !warned() {
        if let Some((host, nic, said)) = too_far.first() {
            analysis.push(
                Fact::new("nccl.gdr_disabled")
                    .host(host)
                    .attr("nic", nic)
                    .attr(
                        "why",
                        "NCCL found the NIC too far from the GPU (its distance is beyond NCCL_NET_GDR_LEVEL); \
                         the log holds no channel line to show which connections it stages through host memory",
                    )
                    .evidence(said.clone()),
            );
            return;
        }
    }
    let Some(first) = rdma.first() else { return };
    if rdma.iter().any(|c| c.gdr) {
        return;
    }
    if let Some((host, nic, said)) = too_far.first() {
        let mut fact = Fact::new("nccl.gdr_disabled")
            .host(host)
            .attr("nic", nic)
            .attr("why", "NCCL found the NIC too far from the GPU (its distance is beyond NCCL_NET_GDR_LEVEL)")
            .evidence(said.clone())
            .evidence(first.evidence.clone());
        if let Some((_, _, other)) = too_far.iter().find(|(other_host, _, _)| other_host != host) {
            fact = fact.evidence(other.clone());
        }
        analysis.push(fact);
        return;
    }
    let Some(far) = analysis.facts.iter().find(|f| f.name == "topo.gpu_nic_sys").cloned() else {
        // Neither NCCL's distance message nor a topology says why; the channels alone say that
        // no connection uses it (NCCL appends /GDRDMA to every one that does, transport/net.cc).
        // That is a slowness to name where the job ran; where NCCL warned of a failure, the
        // failure is what to read.
        if warned() {
            return;
        }
        let host = first.host.clone().unwrap_or_else(|| format!("the host of rank {}", first.owner()));
        let mut fact = Fact::new("nccl.gdr_disabled")
            .host(&host)
            .attr("nic", "every InfiniBand/RoCE connection in the log")
            .attr("why", "no NET/IB channel is marked /GDRDMA: each is staged through host memory");
        for channel in rdma.iter().take(2) {
            fact = fact.evidence(channel.evidence.clone());
        }
        analysis.push(fact);
        return;
    };
    let host = first.host.clone().unwrap_or_else(|| format!("the host of rank {}", first.owner()));
    let mut fact = Fact::new("nccl.gdr_disabled")
        .host(&host)
        .attr("nic", far.get("nic").unwrap_or("the NIC"))
        .attr("why", "every NIC is SYS from the GPU (across the CPU sockets), beyond NCCL_NET_GDR_LEVEL")
        .evidence(first.evidence.clone());
    if let Some(evidence) = far.evidence.first() {
        fact = fact.evidence(evidence.clone());
    }
    analysis.push(fact);
}

/// Some ranks' InfiniBand/RoCE connections use GPUDirect RDMA (`via NET/IB/0/GDRDMA`) and others'
/// do not (`via NET/IB/1`): NCCL enables it per rank when it finds peer-memory support on that
/// host, so the ranks without it are on hosts whose nvidia_peermem (or DMA-BUF path) is missing.
/// Their transfers are staged through host memory.
/// A send uses GPUDirect RDMA only when NCCL may also read GPU memory from the NIC
/// (NCCL_NET_GDR_READ; "GPU Direct RDMA Enabled ... read 0" stages every send by design), a
/// receive whenever GPUDirect RDMA is on: sends without /GDRDMA count only where another send has
/// it, receives without it wherever any connection has it.
fn gdr_partial(channels: &[NetChannel], analysis: &mut Analysis) {
    let ib: Vec<&NetChannel> = channels.iter().filter(|c| c.evidence.text.contains("via NET/IB/")).collect();
    let gdr_sends = ib.iter().any(|c| c.gdr && c.send);
    let ib: Vec<&NetChannel> = ib.into_iter().filter(|c| !c.send || gdr_sends).collect();
    if !ib.iter().any(|c| c.gdr) {
        return;
    }
    let mut without: BTreeMap<String, Vec<&NetChannel>> = BTreeMap::new();
    for channel in ib.iter().filter(|c| !c.gdr) {
        let host = channel.host.clone().unwrap_or_else(|| format!("the host of rank {}", channel.owner()));
        without.entry(host).or_default().push(channel);
    }
    for (host, channels) in without {
        let mut ranks: Vec<u64> = channels.iter().map(|c| c.owner()).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let ranks = ranks.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let mut fact = Fact::new("nccl.gdr_disabled")
            .host(&host)
            .attr("nic", format!("the NICs of rank {ranks} (other ranks' connections use GDRDMA)"));
        for channel in channels.iter().take(3) {
            fact = fact.evidence(channel.evidence.clone());
        }
        if let Some(with) = ib.iter().find(|c| c.gdr) {
            fact = fact.evidence(with.evidence.clone());
        }
        analysis.push(fact);
    }
}

/// Hosts that loaded different net plugins (one the HPC-X/SHARP plugin, another NCCL's internal
/// transport): their NCCL network stacks differ, and connections between them can hang or fail.
fn plugin_mismatch(plugins: &BTreeMap<String, (String, Evidence)>, analysis: &mut Analysis) {
    // Internal against external only: one host logging the plugin's path and another its name is
    // the same plugin.
    let kinds: BTreeSet<bool> = plugins.values().map(|(kind, _)| kind == "internal").collect();
    if kinds.len() < 2 {
        return;
    }
    let values: Vec<String> = plugins.iter().map(|(host, (kind, _))| format!("{host}: {kind}")).collect();
    let mut fact = Fact::new("nccl.env_mismatch").attr("values", format!("net plugin {}", values.join("; ")));
    for (_, evidence) in plugins.values().take(4) {
        fact = fact.evidence(evidence.clone());
    }
    analysis.push(fact);
}

/// Whether an NCCL_IB_HCA value lists two or more devices of one driver numbered from 0 without a
/// gap ("mlx5_0:1,mlx5_1:1,...,mlx5_7:1", "=mlx5_0,mlx5_1"): every device the driver would name on
/// a node of that type, not a hand-picked one. A leading '^' excludes the devices named and '='
/// asks for exact names (src/transport/net_ib/init.cc; matchIfList in src/misc/utils.cc matches
/// names as prefixes otherwise).
fn names_a_whole_device_set(value: &str) -> bool {
    let list = value.trim().trim_start_matches('=');
    if list.starts_with('^') {
        return false;
    }
    let mut driver = None;
    let mut numbers = Vec::new();
    for entry in list.split(',') {
        let name = entry.split(':').next().unwrap_or("").trim();
        let Some((prefix, number)) = name.rsplit_once('_') else { return false };
        let Ok(number) = number.parse::<usize>() else { return false };
        if *driver.get_or_insert(prefix) != prefix {
            return false;
        }
        numbers.push(number);
    }
    numbers.sort_unstable();
    numbers.dedup();
    numbers.len() >= 2 && numbers.iter().enumerate().all(|(i, n)| i == *n)
}

/// "NET/IB : No device found" is normal on one host, but a job that spans hosts, or that asked for
/// InfiniBand (NCCL_IB_DISABLE=0, NCCL_IB_HCA), has lost its RDMA devices and runs over TCP sockets.
fn ib_expected_but_missing(seen: &Observations, analysis: &mut Analysis) {
    let Some((host, evidence)) = seen.ib_not_used.first() else { return };
    let hosts = seen.hosts.iter().filter(|h| h.as_str() != crate::fact::UNKNOWN_HOST).count();
    let asked = |name: &str, value: Option<&str>| {
        seen.settings.get(name).is_some_and(|values| value.is_none_or(|v| values.contains_key(v)))
    };
    // The devices NCCL_IB_HCA names are the only ones NCCL may open: where it finds none, the
    // setting names no device of this host (a VM's or a container's devices are named otherwise,
    // or the list was written for another node type), whatever else the host has. A list of a
    // whole numbered set (mlx5_0 to mlx5_7, the rails of the node type as the driver names them)
    // that matches nothing says rather that this host or container has no RDMA device at all.
    if let Some(values) = seen.settings.get("NCCL_IB_HCA") {
        if let Some((value, said)) = values.iter().next().filter(|(value, _)| !names_a_whole_device_set(value)) {
            let mut fact = Fact::new("nccl.ib_hca_matches_nothing")
                .host(host)
                .attr("value", value)
                .attr("text", format!("NCCL_IB_HCA={value} and NET/IB : No device found"))
                .evidence(evidence.clone());
            if let Some(said) = said.first() {
                fact = fact.evidence(said.clone());
            }
            analysis.push(fact);
        }
    }
    let why = if hosts >= 2 {
        format!("the job spans {hosts} hosts")
    } else if !seen.channels.is_empty() {
        // NCCL uses its network transport only between ranks of different hosts.
        "NCCL connects ranks of different hosts over the network".to_string()
    } else if let Some((rank, _)) = &seen.tree_across_hosts {
        format!("NCCL's trees join rank {rank} to ranks of other hosts")
    } else if asked("NCCL_IB_DISABLE", Some("0")) {
        "NCCL_IB_DISABLE=0 asks for InfiniBand".to_string()
    } else if asked("NCCL_IB_HCA", None) {
        "NCCL_IB_HCA names the devices to use".to_string()
    } else if seen.rdma_plugin {
        "an RDMA net plugin is installed and loaded".to_string()
    } else if let Some(ipoib) =
        seen.socket_transports.values().flat_map(|t| &t.listed).map(|b| &b.iface).find(|iface| iface.starts_with("ib"))
    {
        // IPoIB interfaces are named ib0, ib1 or ibp<bus>s<slot> (drivers/infiniband/ulp/ipoib,
        // systemd's predictable names): sockets over one run on an InfiniBand port.
        format!("NCCL's socket transport runs over {ipoib}, an IPoIB interface of an InfiniBand port")
    } else {
        return;
    };
    let what = if evidence.text.contains("libibverbs") {
        "NCCL could not load libibverbs"
    } else {
        "NET/IB : No device found"
    };
    analysis.push(
        Fact::new("rdma.device_missing")
            .host(host)
            .attr("text", format!("{what}, although {why}"))
            .evidence(evidence.clone()),
    );
}

/// Ranks of different hosts connected over NCCL's socket transport ("via NET/Socket/3") on a host
/// where an RDMA net plugin loaded (HPC-X's IBext, aws-ofi-nccl): NCCL takes its sockets only when
/// no RDMA device could be used, so the job lost its RDMA devices even where the paste lacks the
/// "NET/IB : No device found" line (nccl#952: IBext loaded, bootstrap on IPoIB, channels on sockets).
fn sockets_beside_an_rdma_plugin(seen: &Observations, analysis: &mut Analysis) {
    if !seen.rdma_plugin {
        return;
    }
    let Some(channel) = seen.channels.iter().find(|c| c.evidence.text.contains("via NET/Socket/")) else { return };
    let host = channel.host.clone().unwrap_or_else(|| crate::fact::UNKNOWN_HOST.to_string());
    analysis.push(
        Fact::new("rdma.device_missing")
            .host(&host)
            .attr(
                "text",
                "channels between hosts run over NET/Socket although an RDMA net plugin is installed and loaded",
            )
            .evidence(channel.evidence.clone()),
    );
}

/// NCCL that chose its socket transport ("Using network Socket") on an HPE Slingshot interface
/// (`hsn0`..`hsnN`, the names HPE's Slingshot host software gives the cxi NICs' netdevs): NCCL has
/// no transport of its own for Slingshot, whose RDMA it reaches only through the OFI net plugin
/// (aws-ofi-nccl over libfabric's cxi provider), so a job that took sockets there runs every
/// inter-node byte through TCP on the fabric's own port, whatever else the paste shows (NERSC's and
/// ALCF's NCCL guides: 5 to 10 times slower without the plugin).
fn sockets_over_slingshot(seen: &Observations, analysis: &mut Analysis) {
    if analysis.has("rdma.device_missing") {
        return;
    }
    let Some(chosen) = &seen.socket_network else { return };
    let slingshot =
        |iface: &str| iface.strip_prefix("hsn").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let listed = seen
        .socket_transports
        .iter()
        .flat_map(|(host, transport)| transport.listed.iter().map(move |entry| (host, entry)))
        .find(|(_, entry)| slingshot(&entry.iface))
        .map(|(host, entry)| (host.clone(), entry.iface.clone(), entry.evidence.clone()));
    let named = || {
        seen.socket_devices
            .iter()
            .find(|(device, _)| slingshot(device))
            .map(|(device, evidence)| (crate::fact::UNKNOWN_HOST.to_string(), device.clone(), evidence.clone()))
    };
    let Some((host, iface, evidence)) = listed.or_else(named) else { return };
    let plugin = if seen.rdma_plugin { "did not initialise" } else { "was not loaded" };
    analysis.push(
        Fact::new("rdma.device_missing")
            .host(&host)
            .attr(
                "text",
                format!(
                    "NCCL chose its socket transport on {iface}, an HPE Slingshot interface: NCCL reaches Slingshot's RDMA only through the OFI net plugin (aws-ofi-nccl), which {plugin}"
                ),
            )
            .evidence(chosen.clone())
            .evidence(evidence),
    );
}

/// Every `NCCL_*` setting is a fact of its own, and is kept to compare across hosts.
fn record_settings(
    log: &NcclLog,
    settings: &mut BTreeMap<String, BTreeMap<String, Vec<Evidence>>>,
    analysis: &mut Analysis,
) {
    for setting in &log.settings {
        settings
            .entry(setting.name.clone())
            .or_default()
            .entry(setting.value.clone())
            .or_default()
            .push(setting.evidence.clone());
        analysis.push(
            Fact::new("nccl.env")
                .attr("name", &setting.name)
                .attr("value", &setting.value)
                .evidence(setting.evidence.clone()),
        );
    }
}

/// One NCCL line: what it adds to the observations, and the facts it gives on its own.
fn observe_line(log: &NcclLog, line: &NcclLine, seen: &mut Observations, analysis: &mut Analysis) {
    let evidence = log.evidence(line);
    let host = line.host.clone().unwrap_or_else(|| crate::fact::UNKNOWN_HOST.to_string());
    let message = line.message.as_str();
    if let Some(driver) = word_after(message, "cudaDriverVersion") {
        seen.drivers.entry(driver.to_string()).or_default().push(evidence.clone());
    }
    if message.contains("Init COMPLETE") || message.contains("Init START") {
        record_init(line, &evidence, &mut seen.comms, analysis);
    }
    if message.contains(" nranks ") && message.contains(" busId ") {
        record_communicator_gpu(line, &host, &evidence, &mut seen.comm_gpus);
    }
    if let Some(call) = collective_call(message) {
        let process = (host.clone(), line.pid);
        seen.call_comms.entry(process.clone()).or_default().insert(call.comm.clone());
        seen.calls.entry((call.ranks, call.op_count.clone())).or_default().push((process, call, evidence.clone()));
    }
    if seen.topology_file.is_none()
        && (message.starts_with("Loading topology file") || message.starts_with("NCCL_TOPO_FILE set by environment"))
    {
        seen.topology_file = Some(evidence.clone());
    }
    if message.starts_with("GPU/") {
        record_nvlink_paths(message, &host, &evidence, &mut seen.nvlink_paths);
    }
    if message.contains(" nNodes 1 ") && message.contains("localRanks") && seen.one_node.is_none() {
        seen.one_node = Some((host.clone(), evidence.clone()));
    }
    if message.starts_with("NET/IB : Using") || message.starts_with("NET/IB: Using") {
        record_ib_nics(message, &host, &evidence, seen, analysis);
        if let Some(oob) = message.split("OOB ").nth(1).and_then(|r| r.split(':').next()) {
            seen.oob_interfaces.entry(host.clone()).or_insert_with(|| (oob.trim().to_string(), evidence.clone()));
        }
    }
    if let Some((file, _)) = failed_call(message) {
        // The bootstrap's own calls, and the socket layer under it and the socket transport
        // (misc/socket.cc: a connect, accept or send that failed).
        let socket = super::catalogue::family(file) == "socket";
        let bootstrap = file.ends_with("bootstrap.cc");
        if bootstrap || socket {
            let failure = seen.bootstrap_failures.entry(host.clone()).or_insert_with(|| BootstrapFailure {
                socket,
                through_bootstrap: false,
                first: evidence.clone(),
            });
            failure.through_bootstrap |= failure.socket && bootstrap;
        }
    }
    // "Channel 00 : 1[18000] -> 0[18000] [send] via NET/Socket/1": a channel over interface 1 of
    // the NET/Socket list; a container's veth or a link-local address there reaches no other host.
    if let Some(index) = message
        .split("via NET/Socket/")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse::<usize>().ok())
    {
        let listed = seen.socket_transports.get(&host).and_then(|t| t.listed.get(t.last_listing.checked_add(index)?));
        if let Some(ListedInterface { iface: name, address, .. }) = listed {
            if index > 0
                && (is_suspect_interface(name) || unreachable_address(address).is_some())
                && seen.suspect_channel.insert(host.clone())
            {
                analysis.push(
                    Fact::new("nccl.socket_iface_suspect")
                        .host(&host)
                        .attr("iface", name)
                        .attr("used_by", "transport")
                        .evidence(evidence.clone()),
                );
            }
        }
    }
    // INFO lines of the socket layer's retries (misc/socket.cc): each attempt that fails the same
    // way; after the last one NCCL gives up with a WARN that the paste often lacks.
    if line.level != Level::Warn && message.contains("retrying") {
        let lower = message.to_ascii_lowercase();
        // "%s: connect returned %s, retrying" and, from NCCL 2.19, "%s: connect to %s returned %s,
        // retrying" (misc/socket.cc, os/linux.cc).
        let connect_retry =
            lower.contains("connect returned") || (lower.contains("connect to ") && lower.contains(" returned "));
        if lower.contains("no route to host") || lower.contains("network is unreachable") {
            analysis.push(Fact::new("nccl.network_unreachable").host(&host).evidence(evidence.clone()));
        } else if connect_retry {
            // A refused connect is retried because the peer's listener may not be up yet; refused
            // again and again, nothing listens there (judged once every line is read).
            if lower.contains("connection refused") {
                seen.refused_retries.entry(host.clone()).or_default().push(evidence.clone());
            }
            analysis.push(
                Fact::new("nccl.socket_connect_failed").host(&host).attr("error", message).evidence(evidence.clone()),
            );
        }
        // As for the WARN that follows the last retry: a link-local or loopback peer address is an
        // interface no other host reaches.
        if let Some(address) = unreachable_address(message).filter(|_| connect_retry) {
            analysis.push(
                Fact::new("nccl.socket_iface_suspect")
                    .host(&host)
                    .attr("iface", format!("the one with {address}"))
                    .evidence(evidence.clone()),
            );
        }
    }
    if seen.tree_across_hosts.is_none() {
        if let Some(rank) = message.strip_prefix("Trees ").and_then(tree_with_children_of_other_hosts) {
            seen.tree_across_hosts = Some((rank, evidence.clone()));
        }
    }
    // A net plugin for RDMA (HPC-X's "NCCL RDMA Plugin", the IBext transport) is installed to use
    // InfiniBand or RoCE: the job expects RDMA devices.
    // So is aws-ofi-nccl (for EFA and other libfabric RDMA providers), whether it initialised or
    // not ("NET/OFI Initializing aws-ofi-nccl 1.12.1-aws", "NET/OFI aws-ofi-nccl initialization
    // failed").
    let ofi = message.contains("NET/OFI");
    if message.contains("Loaded net plugin NCCL RDMA Plugin")
        || message.starts_with("P2P plugin IBext")
        || (ofi
            && (message.contains("NET/OFI Initializing aws-ofi-nccl")
                || message.contains("NET/OFI aws-ofi-nccl initialization failed")))
    {
        seen.rdma_plugin = true;
    }
    // aws-ofi-nccl settling for a libfabric provider that is no RDMA transport ("NET/OFI Selected
    // Provider is tcp (found 1 nics)"): no EFA (or verbs) device could be opened here, so every
    // inter-node byte goes through the kernel's TCP stack.
    if let Some(provider) = ofi.then(|| message.split("NET/OFI Selected Provider is ").nth(1)).flatten() {
        let name = provider.split_whitespace().next().unwrap_or("");
        if ["tcp", "sockets", "udp"].iter().any(|p| name == *p || name.starts_with(&format!("{p};"))) {
            analysis.push(
                Fact::new("rdma.device_missing")
                    .host(&host)
                    .attr("text", format!("aws-ofi-nccl found no RDMA provider and uses libfabric's {name} provider"))
                    .evidence(evidence.clone()),
            );
        }
    }
    // Which net plugin this host loaded (src/plugin/net.cc): "NET/Plugin: Could not find:
    // libnccl-net.so. Using internal network plugin." / "NET/Plugin : No plugin found ..., using
    // internal implementation", against "Loaded net plugin NAME" or "Plugin Path : PATH".
    if line.host.is_some() {
        let plugin = if message.starts_with("NET/Plugin") && message.to_ascii_lowercase().contains("internal") {
            Some("internal".to_string())
        } else if let Some(name) = message.split("Loaded net plugin ").nth(1) {
            Some(name.split(" (").next().unwrap_or(name).trim().to_string())
        } else {
            message.strip_prefix("Plugin Path :").map(|path| path.trim().to_string())
        };
        if let Some(plugin) = plugin {
            seen.net_plugins.entry(host.clone()).or_insert((plugin, evidence.clone()));
        }
    }
    if message.starts_with("Bootstrap : Using")
        || message.starts_with("NET/Socket : Using")
        || message.starts_with("NET : Using interface")
    {
        suspect_socket_interface(message, &host, &evidence, &mut seen.docker_bridges, analysis);
        // The address is all after the interface's name: an IPv6 one has colons of its own. An
        // entry whose address the poster hid ("[0]ib0.<ip>") keeps its place in the list, without one.
        let mut interfaces = using_list(message).into_iter().map(|entry| {
            let named = entry.split('<').next().unwrap_or(&entry);
            let (iface, address) = named.split_once(':').unwrap_or((named.trim_end_matches('.'), ""));
            ListedInterface { iface: iface.to_string(), address: address.to_string(), evidence: evidence.clone() }
        });
        if message.starts_with("Bootstrap : Using") {
            if let Some(first) = interfaces.find(|b| !b.address.is_empty()) {
                seen.bootstraps.entry(host.clone()).or_insert(first);
            }
        } else {
            let transport = seen.socket_transports.entry(host.clone()).or_default();
            if message.starts_with("NET/Socket : Using") {
                // Every rank of a host prints the same listing: one copy is kept.
                let entries: Vec<ListedInterface> = interfaces.collect();
                let last = &transport.listed[transport.last_listing..];
                let same = !last.is_empty()
                    && last.len() == entries.len()
                    && last.iter().zip(&entries).all(|(a, b)| a.iface == b.iface && a.address == b.address);
                if !same {
                    transport.last_listing = transport.listed.len();
                    transport.listed.extend(entries);
                }
            } else {
                transport.listed.extend(interfaces);
            }
        }
    }
    // The INFO line that says IB is not in use at all (net_ib.cc). A single-host or TCP-only job
    // prints it too, so alone it establishes nothing; beside a failure to open a device it confirms
    // the fallback to sockets.
    // So is NCCL unable to load libibverbs at all (misc/ibvwrap.cc: "Failed to open
    // libibverbs.so[.1]"), as in a container image without rdma-core's libraries: no IB device can
    // be used, whatever the host has.
    if message.starts_with("NET/IB : No device found") {
        analysis.push(Fact::new("nccl.ib_not_used").host(&host).evidence(evidence.clone()));
        seen.ib_not_used.push((host.clone(), evidence.clone()));
    } else if message.starts_with("Failed to open libibverbs") && line.level != Level::Warn {
        // Only recorded: as a WARN (NCCL before 2.19) the catalogue reads it on its own.
        seen.ib_not_used.push((host.clone(), evidence.clone()));
    }
    seen.hosts.insert(host.clone());
    // net_ib.cc prints, per HCA, whether GPUDirect RDMA can be used ("GPU Direct RDMA Disabled for
    // HCA 0 'mlx5_0'"): disabled means no peer-memory support was found on this host. NCCL prints
    // the same for its socket transport ("NET/Socket : ... for HCA 0 'eth0'"), which never reads GPU
    // memory directly: that is no fault.
    // One search finds both forms; graph/paths.cc's per-GPU form (2.18 and later: "GPU Direct RDMA
    // Disabled for GPU 2[2] / HCA 0 (distance 3 >= 2)") is the distance policy, kept for the
    // channels' verdict (`gdr_off_across_sockets`).
    // NCCL's own word that its kernels need more shared memory than this GPU offers ("ncclMaxSharedMem
    // 82240 exceeds device/fn maxSharedMem 79856", init.cc): the release was not built for this GPU
    // (a new architecture, RTX 5090 on 2.25), so its collectives cannot launch there, which a later
    // release fixes (NVIDIA/nccl#1637).
    if message.starts_with("ncclMaxSharedMem") && message.contains(" exceeds ") {
        analysis.push(
            Fact::new("nccl.internal")
                .host(&host)
                .attr("text", format!("{message}: this NCCL release's kernels do not fit this GPU"))
                .evidence(evidence.clone()),
        );
    }
    let socket_transport = message.starts_with("NET/Socket");
    let disabled_for = message.split_once("GPU Direct RDMA Disabled for ").map(|(_, rest)| rest);
    seen.gdr_enabled |= message.contains("GPU Direct RDMA Enabled for ");
    if let Some(rest) = disabled_for.and_then(|r| r.strip_prefix("GPU")).filter(|r| r.contains("(distance ")) {
        let nic = rest.split_once("/ HCA ").map_or("", |(_, nic)| nic.split(" (").next().unwrap_or(nic).trim());
        seen.gdr_too_far.push((host.clone(), format!("HCA {nic}"), evidence.clone()));
    }
    if let Some(rest) = disabled_for.and_then(|r| r.strip_prefix("HCA")).filter(|_| socket_transport) {
        let device = rest.split('\'').nth(1).unwrap_or(rest.trim()).to_string();
        if seen.socket_devices.len() < 64 {
            seen.socket_devices.push((device, evidence.clone()));
        }
    }
    if message.trim_end() == "Using network Socket" && seen.socket_network.is_none() {
        seen.socket_network = Some(evidence.clone());
    }
    if let Some(rest) = disabled_for.and_then(|r| r.strip_prefix("HCA")).filter(|_| !socket_transport) {
        let nic = rest.split('\'').nth(1).unwrap_or(rest.trim()).to_string();
        analysis.push(Fact::new("nccl.gdr_disabled").host(&host).attr("nic", nic).evidence(evidence.clone()));
    }
    // aws-ofi-nccl (src/platform-aws.c) on instance types whose EFA devices support GPUDirect RDMA:
    // "NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge" (Libfabric found no FI_HMEM
    // support, or the peer-memory path is missing); the plugin refuses to run without it there.
    if let Some(rest) = message.strip_prefix("NET/OFI GDR disabled on GDR-supported instance type") {
        let instance = rest.split_whitespace().next().unwrap_or("this instance type");
        analysis.push(
            Fact::new("nccl.gdr_disabled")
                .host(&host)
                .attr("nic", format!("the EFA devices of a {instance}"))
                .evidence(evidence.clone()),
        );
    }
    if let Some(channel) = net_channel(log, line) {
        seen.channels.push(channel);
    }
    // "Channel 00 : 1[1] -> 0[0] via SHM/direct/direct": rank 1 printed it while connecting, so
    // it was there whether or not its "Init COMPLETE" line was kept in the paste.
    if let Some(source) = message
        .strip_prefix("Channel ")
        .and_then(|r| r.split_once(" : "))
        .and_then(|(_, r)| r.split('[').next())
        .and_then(|r| r.trim().parse::<u64>().ok())
    {
        seen.channel_sources.insert(source);
    }
    if let Some(members) = ring_members(message) {
        seen.ring_members.insert(members);
    }
    // Most lines of a large job's log are channel lines: the line and host are copied only for a
    // pair not seen before.
    if let Some((sender, receiver, inside_host)) = channel_link(message) {
        if seen.channel_pairs.insert((sender, receiver)) {
            seen.channel_links.push(ChannelLink {
                sender,
                receiver,
                inside_host,
                host: host.clone(),
                evidence: evidence.clone(),
            });
        }
    }
    // IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE on one port (net_ib async events): the link
    // went down and came back, a flap; again and again, a bad cable, optic or switch port.
    let lower_message = message.to_ascii_lowercase();
    if lower_message.contains("async") && lower_message.contains("event") {
        let kind = if lower_message.contains("port error") {
            Some(false)
        } else if lower_message.contains("port active") {
            Some(true)
        } else {
            None
        };
        if let Some(active) = kind {
            let device = async_event_device(message);
            seen.port_events.entry((host.clone(), device)).or_default().push((active, evidence.clone()));
        }
    }
    // An IPv4-mapped GID (::ffff:a.b.c.d, RFC 4291 2.5.5.2) is a RoCE v2 address: InfiniBand GIDs
    // carry the subnet prefix and port GUID, never an IPv4 address. NCCL prints the GIDs of a QP it
    // could not connect ("local GID ::ffff:10.0.0.1, remote GID ...").
    let ethernet_gid = line.message.contains("GID ::ffff:") || queue_pair_gid(&line.message).is_some_and(ethernet);
    if ethernet_gid && seen.roce_from_gid.insert(host.clone()) {
        analysis.push(Fact::new("nccl.roce").host(&host).evidence(evidence.clone()));
    }
    if line.level == Level::Warn {
        let mut fact = warning_fact(line, &host).evidence(evidence.clone());
        // aws-ofi-nccl refusing a GPU buffer ("NET/OFI Unable to register memory (type = 2) for
        // device 3. RC: -22"; type 2 is NCCL_PTR_CUDA, nccl_net.h) where libfabric said it could
        // not start its CUDA memory interface: no GPU memory reaches the NIC, GPUDirect RDMA is
        // unavailable, rather than a plugin and libfabric that do not go together.
        if fact.name == "nccl.registration_unsupported"
            && line.message.contains("(type = 2)")
            && analysis.has("libfabric.cuda_memory_unavailable")
        {
            let device = word_after(&line.message, "device").map_or("?", |d| d.trim_end_matches('.'));
            fact = Fact::new("nccl.gdr_disabled")
                .host(&host)
                .attr(
                    "nic",
                    format!("libfabric's device {device} (libfabric could not start its CUDA memory interface)"),
                )
                .evidence(evidence.clone());
        }
        if fact.name == "nccl.wc_error" {
            link_local_queue_pair(line, &host, &fact, &evidence, seen, analysis);
        }
        // A connection attempt to a link-local or loopback address means the peer announced the
        // address of an interface no other host can reach (RFC 3927 169.254/16, RFC 4291 fe80::/10).
        if fact.name == "nccl.socket_connect_failed" {
            let lower = line.message.to_ascii_lowercase();
            // A refused connection (RST): the address answers but nothing listens on the port, a
            // firewall rejects it, or the address is a host that is not the peer at all. A connect
            // that timed out (ETIMEDOUT, connect(2): no answer to its SYNs) reached nothing: a
            // firewall that drops, or an address no route leads to (nccl-tests#15).
            // A connect the local stack aborted ("Software caused connection abort", ECONNABORTED:
            // the handshake was torn down, as a firewall's reset or a vanished route does; xDiT#111)
            // reached no peer either.
            if lower.contains("no route to host")
                || lower.contains("network is unreachable")
                || lower.contains("connection refused")
                || (lower.contains("connect") && lower.contains("connection timed out"))
                || (lower.contains("connect") && lower.contains("software caused connection abort"))
            {
                seen.connect_failed.insert(host.clone());
                analysis.push(Fact::new("nccl.network_unreachable").host(&host).evidence(evidence.clone()));
            }
            if let Some(address) = unreachable_address(&line.message) {
                analysis.push(
                    Fact::new("nccl.socket_iface_suspect")
                        .host(&host)
                        .attr("iface", format!("the one with {address}"))
                        .evidence(evidence),
                );
            }
        }
        // A rank's proxy thread that failed an operation ("[Proxy Service 1] Failed to execute
        // operation Connect from rank 1, retcode 3", proxy.cc) closes its socket, and the rank's
        // main thread then finds "Connection closed by remote peer" naming its own host: the peer
        // that went away is this rank's own proxy, whose failure is already the fact, not a rank
        // missing from the job (ROCm/rccl#1261).
        if line.message.contains("Failed to execute operation") {
            seen.proxy_failed.insert(host.clone());
        }
        if fact.name == "nccl.remote_closed"
            && fact.get("host") == Some(host.as_str())
            && seen.proxy_failed.contains(&host)
        {
            return;
        }
        // A rank that could not connect to its peer (refused, timed out, no route) and then finds
        // a connection closed by a peer it cannot name: the close follows the connection that never
        // formed, and says nothing of a rank of its own (NVIDIA/nccl-tests#15, PaddlePaddle#10499).
        if fact.name == "nccl.remote_closed"
            && fact.get("peer") == Some("unknown")
            && seen.connect_failed.contains(&host)
        {
            return;
        }
        // A listening socket NCCL could not bind because another process holds the address
        // (EADDRINUSE, bind(2): a run killed before it closed its sockets, a second job given the
        // same NCCL_COMM_ID port): the line states its cause, which is no fault of NCCL's and
        // which no playbook names. It stays an error line to quote, as PyTorch's store that
        // finds its port taken does (unexplained.rs), not an NCCL failure of unknown cause.
        if fact.name == "nccl.error" && line.message.contains("Address already in use") {
            return;
        }
        analysis.push(fact);
    }
}

/// The GID of a queue pair as NCCL's net_ib.cc prints it when it connects ("GID 0
/// (80FE/1A8A41FEFF21A75E)": the subnet prefix and interface id, each a 64-bit word read in the
/// host's little-endian order), as its 16 bytes in wire order.
fn queue_pair_gid(message: &str) -> Option<[u8; 16]> {
    let at = message.find(" GID ")?;
    let rest = &message[at + 5..];
    let (_index, rest) = rest.split_once(" (")?;
    let (prefix, rest) = rest.split_once('/')?;
    let interface = rest.split(')').next()?;
    let word = |hex: &str| u64::from_str_radix(hex, 16).ok().map(u64::to_le_bytes);
    let (prefix, interface) = (word(prefix)?, word(interface)?);
    let mut gid = [0u8; 16];
    gid[..8].copy_from_slice(&prefix);
    gid[8..].copy_from_slice(&interface);
    Some(gid)
}

/// A failed completion whose queue pair's own GID NCCL prints ("... status=12 ... localGid
/// fe80::966d:aeff:fec6:c6c2 remoteGids fe80::...", net_ib.cc from 2.19) tells the link layer: a
/// GID made from a MAC address is RoCE's. A link-local one (fe80::, GID index 0 or 1 of a RoCE
/// port) is routed nowhere beyond its own Ethernet segment, so a queue pair that ran out of retries
/// with it chose the wrong GID index (finetrainers#16, A800 nodes across a routed fabric).
fn link_local_queue_pair(
    line: &NcclLine,
    host: &str,
    fact: &Fact,
    evidence: &Evidence,
    seen: &mut Observations,
    analysis: &mut Analysis,
) {
    let Some(gid) = line
        .message
        .split("localGid ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|text| text.parse::<std::net::Ipv6Addr>().ok())
        .map(|address| address.octets())
    else {
        return;
    };
    if !ethernet(gid) {
        return;
    }
    if seen.roce_from_gid.insert(host.to_string()) {
        analysis.push(Fact::new("nccl.roce").host(host).evidence(evidence.clone()));
    }
    // An IPv4-mapped GID is the RoCE v2 one NCCL should use: the index was right, whatever else
    // made the queue pair run out of retries (nccl#1698, #1814: lossy RoCE).
    if ipv4_mapped(gid) {
        analysis.push(
            Fact::new("nccl.gid_routable")
                .host(host)
                .attr("gid", std::net::Ipv6Addr::from(gid).to_string())
                .evidence(evidence.clone()),
        );
    } else if link_local_from_mac(gid) && fact.get("status") == Some("12") {
        analysis.push(
            Fact::new("nccl.gid_index_wrong")
                .host(host)
                .attr("gid", std::net::Ipv6Addr::from(gid).to_string())
                .attr("configured", "a link-local GID (index 0 or 1), not the RoCE v2 IPv4 one")
                .evidence(evidence.clone()),
        );
    }
}

/// A GID only an Ethernet (RoCE) port has: an IPv4-mapped address (RoCE v2, RFC 4291 2.5.5.2), or
/// a link-local one whose interface id is a MAC address made EUI-64 (FF FE in its middle, RFC 4291
/// appendix A), as RoCE derives GID 0 from the port's MAC; an InfiniBand GID carries the port GUID.
pub(super) fn ethernet(gid: [u8; 16]) -> bool {
    ipv4_mapped(gid) || link_local_from_mac(gid)
}

pub(super) fn ipv4_mapped(gid: [u8; 16]) -> bool {
    gid[..10].iter().all(|&b| b == 0) && gid[10] == 0xff && gid[11] == 0xff
}

fn link_local_from_mac(gid: [u8; 16]) -> bool {
    gid[0] == 0xfe && gid[1] == 0x80 && gid[11] == 0xff && gid[12] == 0xfe
}

/// An Init START or Init COMPLETE line: the rank's progress in its communicator, and its host, GPU
/// and bus id in the rank table.
fn record_init(line: &NcclLine, evidence: &Evidence, comms: &mut Communicators, analysis: &mut Analysis) {
    let message = line.message.as_str();
    let (Some(rank), Some(nranks)) = (number_after(message, "rank"), number_after(message, "nranks")) else {
        return;
    };
    let key = word_after(message, "commId").map(str::to_string).unwrap_or_else(|| format!("nranks {nranks}"));
    let entry = comms.entry(key).or_insert((nranks, BTreeMap::new()));
    let state = entry.1.entry(rank).or_insert((false, false));
    if message.contains("Init COMPLETE") {
        state.1 = true;
    } else {
        state.0 = true;
    }
    analysis.ranks.record(
        rank,
        line.host.as_deref(),
        number_after(message, "cudaDev").map(|d| d as u32).or(line.dev),
        word_after(message, "busId"),
        evidence.clone(),
    );
}

/// The link layer NCCL names a device of its `NET/IB : Using` list by ("mlx5_0:1/IB", "mlx5_2:1/RoCE"),
/// without the SHARP capability it adds after it ("mlx5_16:1/IB/SHARP", net_ib.cc).
fn link_layer(device: &str) -> &str {
    device.split('/').nth(1).unwrap_or("")
}

/// A `NET/IB : Using` line: the host's NICs in NCCL's index order (channels name them by index),
/// and a fact when any of them is RoCE.
fn record_ib_nics(message: &str, host: &str, evidence: &Evidence, seen: &mut Observations, analysis: &mut Analysis) {
    let nics = using_list(message);
    if nics.iter().any(|n| link_layer(n) == "RoCE") {
        analysis.push(Fact::new("nccl.roce").host(host).evidence(evidence.clone()));
    }
    // Every device InfiniBand (NCCL names each by its port's link layer, net_ib.cc): the job's
    // connections cross LID-routed ports, where no lossy Ethernet drops packets.
    if !nics.is_empty() && nics.iter().all(|n| link_layer(n) == "IB") {
        analysis.push(
            Fact::new("rdma.infiniband")
                .host(host)
                .attr("nics", nics.iter().map(|n| n.split(':').next().unwrap_or(n)).collect::<Vec<_>>().join(", "))
                .evidence(evidence.clone()),
        );
    }
    // InfiniBand rails and a RoCE port in one list: NCCL_IB_HCA (or its default, every device)
    // takes in a port of another fabric, usually the host's front-end bond, which the rails'
    // peers cannot reach over IB. Said once the whole input is read ([`mixed_fabrics`]).
    let roce: Vec<(u32, &String)> =
        nics.iter().enumerate().filter(|(_, n)| link_layer(n) == "RoCE").map(|(i, n)| (i as u32, n)).collect();
    if !roce.is_empty() && nics.iter().any(|n| link_layer(n) == "IB") {
        let names: Vec<&str> = roce.iter().map(|(_, n)| n.split(':').next().unwrap_or(n)).collect();
        let fact = Fact::new("nccl.ib_hca_mixed").host(host).attr("nics", names.join(", ")).evidence(evidence.clone());
        seen.mixed_fabrics.push((fact, roce.iter().map(|(i, _)| *i).collect()));
    }
    seen.host_nics
        .insert(host.to_string(), nics.iter().map(|n| n.split(':').next().unwrap_or(n).to_string()).collect());
}

/// NET/IB lists that mix InfiniBand rails with a RoCE port, except where the job runs on one host:
/// NCCL then sends nothing over any NIC (its ranks meet over NVLink, PCIe or shared memory), so the
/// list costs nothing (a healthy 8-GPU Azure node lists its front-end mlx5_an0 beside the eight
/// rails, AMD-AGI/sand-pipeline).
///
/// A connection of the host's over the RoCE port (`used=yes`) is one its InfiniBand peers cannot
/// take, which explains a queue pair that then fails to connect better than a GID index does.
fn mixed_fabrics(seen: &mut Observations, analysis: &mut Analysis) {
    let mixed = std::mem::take(&mut seen.mixed_fabrics);
    if analysis.has("nccl.single_host") {
        return;
    }
    for (fact, roce_indexes) in mixed {
        let channels: Vec<&NetChannel> =
            seen.channels.iter().filter(|channel| channel.host.as_deref() == fact.get("host")).collect();
        let used = channels.iter().any(|channel| roce_indexes.contains(&channel.nic_index));
        // The host's network channels are in the log, at least one per NIC it listed, and none goes
        // through the odd port: NCCL listed it but routes nothing over it, and the rails carry the
        // job. (A line or two of a larger log says nothing of the channels left out.)
        let listed = fact.get("host").and_then(|host| seen.host_nics.get(host)).map_or(usize::MAX, Vec::len);
        if !used && channels.len() >= listed.max(2) {
            continue;
        }
        // The host's bootstrap failed before any channel was built: its TCP sockets, not a NIC of
        // the list, stopped the job (NVIDIA/nccl#1000: SHARP rails and a RoCE port listed, and the
        // bootstrap over IPoIB failing).
        let bootstrap_failed = fact.get("host").is_some_and(|host| seen.bootstrap_failures.contains_key(host));
        if !used && channels.is_empty() && bootstrap_failed {
            continue;
        }
        analysis.push(if used { fact.attr("used", "yes") } else { fact });
    }
}

/// A `Bootstrap : Using` or `NET/Socket : Using` line whose first interface is one ranks can rarely
/// reach each other on.
fn suspect_socket_interface(
    message: &str,
    host: &str,
    evidence: &Evidence,
    docker_bridges: &mut BTreeMap<String, (String, Evidence)>,
    analysis: &mut Analysis,
) {
    let list = using_list(message);
    // "eno1:avahi:169.254.x.x": avahi-autoipd's link-local alias of an interface, which no other
    // host routes to (RFC 3927); "veth1:fe80::...%veth1": an IPv6 link-local address.
    let suspect = |entry: &String| {
        let interface = entry.split(':').next().unwrap_or(entry);
        (is_suspect_interface(interface) || entry.contains(":avahi") || unreachable_address(entry).is_some())
            .then(|| interface.to_string())
    };
    // Inside a container on a Docker bridge (its host name the container id Docker gives it,
    // twelve hexadecimal digits) the interface is eth0 with an address in 172.17.0.0/16, the
    // default bridge's subnet (dockerd --bip), or in the next /16 of dockerd's default address
    // pools (172.18.0.0/16 to 172.31.0.0/16) for a network that compose or `docker network create`
    // made: subnets every host has privately. A job inside one container uses it well, so it is a
    // suspect only where that host's sockets failed (below).
    let docker_container = host.len() == 12 && host.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
    if docker_container && message.starts_with("Bootstrap") {
        if let Some(entry) = list.first().filter(|entry| entry.split(':').nth(1).is_some_and(docker_pool_address)) {
            let interface = entry.split(':').next().unwrap_or(entry).to_string();
            docker_bridges.entry(host.to_string()).or_insert((interface, evidence.clone()));
        }
    }
    // Bootstrap uses the first interface only. The socket transport makes every listed interface
    // a network device and spreads its channels over them (transport/net_socket.cc,
    // ncclNetSocketInit), so a container bridge or veth anywhere in that list carries a share of
    // the traffic towards addresses no other host has.
    let (candidates, used_by) =
        if message.starts_with("NET/Socket") { (list.len(), "transport") } else { (1, "bootstrap") };
    if let Some(interface) = list.iter().take(candidates).find_map(suspect) {
        analysis.push(
            Fact::new("nccl.socket_iface_suspect")
                .host(host)
                .attr("iface", interface)
                .attr("used_by", used_by)
                .evidence(evidence.clone()),
        );
    }
}

/// The first link-local or loopback address a message names (`Connect to 169.254.0.1<40815>`).
fn unreachable_address(message: &str) -> Option<&str> {
    message
        .split(|c: char| c.is_whitespace() || c == '<' || c == '[' || c == ']' || c == ',')
        .find(|t| t.starts_with("169.254.") || t.starts_with("127.") || t.to_ascii_lowercase().starts_with("fe80:"))
}

/// The device of an `NET/IB : mlx5_32:1 Got async error event: port error` line ("mlx5_32:1").
fn async_event_device(message: &str) -> String {
    message
        .split("NET/IB")
        .nth(1)
        .map(|r| r.trim_start_matches([' ', ':']))
        .and_then(|r| r.split_whitespace().next())
        .filter(|device| device.contains(':') || device.starts_with("mlx"))
        .unwrap_or("unknown")
        .to_string()
}

/// What a `NCCL WARN` line reports, most specific kind first; `nccl.error` for the rest.
fn warning_fact(line: &NcclLine, host: &str) -> Fact {
    let message = line.message.as_str();
    let lower = message.to_ascii_lowercase();
    // NCCL's source file that printed it: the line's own location, else the catalogue's. Looked up
    // once, and only when a rule below needs it.
    let source = std::cell::OnceCell::new();
    let source_file =
        || *source.get_or_init(|| line.source.as_deref().or_else(|| super::catalogue::lookup(message).map(|e| e.file)));
    if lower.contains("got completion") && (lower.contains("error") || lower.contains("status=")) {
        wc_error_fact(line, host)
    } else if lower.contains("collective mismatch")
        || lower.contains("mismatched collective")
        || (lower.contains("message truncated")
            && (lower.contains("mismatch in collective sizes")
                || lower.starts_with("net/socket")
                || source_file().is_some_and(|file| file.contains("net_socket"))))
    {
        // A network transport's receive longer than the buffer posted for it (net_socket.cc: "NET/Socket
        // : peer ... message truncated : receiving 4 bytes instead of 2 ... there may be a mismatch in
        // collective sizes or environment settings"): the peer sent for another collective, or with
        // other sizes, NCCL's own words say. Releases before the hint (2.4: "NET/Socket : message
        // truncated : receiving 696320 bytes instead of 32768") say the same of the same transport.
        // The bootstrap's "Message truncated" stays internal.
        collective_mismatch_fact(message, host)
    } else if lower.contains("failed to execute operation")
        && lower.contains("retcode 3")
        && !lower.contains("operation close")
    {
        // proxy.cc: the proxy thread's operation (a network connect, a registration) returned
        // ncclInternalError (3, nccl.h's ncclResult_t): the net transport or plugin under it failed
        // in its own code; a fault NCCL could name would have returned a system (2) or remote (6)
        // error, and its own WARN beside this one names it. A Close that fails is the teardown of a
        // communicator already aborted for another reason (GKE fault-injection labs: a count
        // mismatch, a straggler).
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("duplicate gpu detected")
        || lower.contains("multiple ranks detected using the same gpu")
        || lower.contains("multiple ranks are using the same gpu")
    {
        // init.cc: two ranks of one communicator on the same CUDA device (NCCL refuses it; 2.31
        // says "Multiple Ranks are using the same GPU/Partition" and offers NCCL_MULTI_RANK_GPU_ENABLE).
        Fact::new("nccl.duplicate_gpu").host(host).attr("text", message)
    } else if lower.contains("some pfn functions not found")
        || (lower.starts_with("retrieve ") && lower.contains(" failed with "))
    {
        // misc/cudawrap.cc: the CUDA driver library the process loaded does not give NCCL the
        // driver entry points every driver has ("Retrieve cuDeviceGet failed with 0 status 1":
        // cudaGetDriverEntryPoint answered cudaDriverEntryPointSymbolNotFound): a library between
        // the program and the driver (a GPU-sharing layer's libcuda, Project-HAMi/HAMi#1055) or a
        // stub, which NCCL cannot run over.
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.starts_with("net/ofi unexpected ") {
        // aws-ofi-nccl's check of what a peer sent while connecting (tools.rs reads it pasted alone).
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("doca failure") {
        // transport/net_ib/gdaki (2.28+): the DOCA GPUNetIO verbs of NCCL's GPU-initiated network
        // path refused a call ("gdakiConnectQp ... DOCA failure 21"): NCCL's own use of that
        // library on this port (nccl#2237: address handles without a GRH on a port that requires
        // one), or a DOCA that does not match the NCCL build.
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("async event") && lower.contains("local catastrophic error") {
        // IBV_EVENT_DEVICE_FATAL (ibv_get_async_event(3): "local catastrophic error"): the adapter
        // itself failed; every queue pair on it is gone until it is reset.
        Fact::new("nic.hw_fault")
            .host(host)
            .attr("device", async_event_device(message))
            .attr("how", "the adapter raised a fatal device event (local catastrophic error)")
    } else if lower.contains("async event") && lower.contains("port error") {
        // net_ib: IBV_EVENT_PORT_ERR, the port left the Active state (a link going down).
        Fact::new("nccl.port_error").host(host).attr("nic", async_event_device(message))
    } else if lower.contains("out of memory")
        || lower.contains("failed to cuda calloc")
        || lower.contains("failed to cuda malloc")
    {
        Fact::new("nccl.gpu_out_of_memory").host(host).attr("text", message)
    } else if lower.contains("no algorithm/protocol available")
        || lower.contains("no algorithm/protocol nor symkernelid available")
    {
        // enqueue.cc getAlgoInfo: every algorithm/protocol pair is disabled for this collective,
        // which happens when NCCL_ALGO / NCCL_PROTO force one that cannot run here; 2.31's message
        // also names the symmetric kernels ("No algorithm/protocol nor symKernelId
        // available for function Broadcast", vllm-project/vllm#58179).
        Fact::new("nccl.no_algorithm").host(host).attr("text", message)
    } else if lower.contains("cannot be captured in a graph")
        || lower.contains("not supported in the installed cuda driver")
        || lower.contains("driver version is insufficient")
        || lower.contains("insufficient driver")
        || lower.contains("cuda driver version")
        // NVML refusing to start because the kernel module and the user-space driver are of two
        // releases (NVML_ERROR_LIB_RM_VERSION_MISMATCH, "nvmlInit_v2() failed: Driver/library
        // version mismatch", misc/nvmlwrap.cc; NVIDIA/nccl#726 on Summit): a driver upgraded
        // without a reboot or a container's driver libraries of another release.
        || lower.contains("driver/library version mismatch")
    {
        Fact::new("nccl.cuda_version").host(host).attr("text", message)
    } else if (lower.contains("reg_mr") || lower.contains("reg_dmabuf_mr") || lower.contains("register memory"))
        && (lower.contains("cannot allocate memory") || lower.contains("enomem") || lower.contains("error 12"))
    {
        // Registration pins pages against RLIMIT_MEMLOCK (ibv_reg_mr(3): ENOMEM).
        Fact::new("nccl.memlock").host(host).attr("text", message)
    } else if (lower.contains("call to ibv_create_qp failed")
        || lower.contains("call to ibv_create_cq failed")
        || lower.contains("call to ibv_reg_mr failed"))
        && !lower.contains(" with ")
    {
        // NCCL before 2.12 printed the failed verbs call without its errno; a queue pair, a
        // completion queue and a registered buffer are pinned memory, and RLIMIT_MEMLOCK is what
        // stops them first (a Slurm step or container that did not get `ulimit -l unlimited`).
        // NCCL registers GPU memory only where it found peer-memory support, so a bare refusal is
        // not GPUDirect's.
        Fact::new("nccl.memlock").host(host).attr("text", message)
    } else if lower.contains("reg_dmabuf_mr") || lower.contains("register memory") || lower.contains("ibv_reg_mr") {
        // The verbs stack refuses the buffer type: DMA-BUF on an old driver, a libfabric that does
        // not know CUDA memory (EINVAL/EOPNOTSUPP): versions that do not go together.
        Fact::new("nccl.registration_unsupported").host(host).attr("text", message)
    } else if lower.contains("no interface found in the same subnet") {
        // misc/socket.cc (include/socket.h before 2.12): NCCL_COMM_ID or the root's address lies
        // on a subnet none of this host's interfaces is on, so NCCL bootstraps from an interface
        // the peers cannot reach (a container's bridge address).
        Fact::new("nccl.socket_iface_suspect").host(host).attr("iface", "none").attr("text", message)
    } else if let Some(values) = transports_differ(&lower) {
        // misc/socket.cc: a connection announces its ncclSocketType (include/socket.h: 3
        // NetSocket, 4 NetIb) and the acceptor refuses another type. A net socket connection
        // met by an IB one is two ranks that chose different network transports: NCCL's
        // settings (NCCL_IB_DISABLE, NCCL_NET) or devices differ between them (nccl-tests#360:
        // variables exported on one node and not passed to the other ranks).
        Fact::new("nccl.env_mismatch").host(host).attr("name", "network transport").attr("values", values)
    } else if lower.contains("message truncated")
        || lower.contains("socketfinalizeaccept")
        || (lower.contains("sockettryaccept") && lower.contains("accept failed"))
    {
        // bootstrap.cc: a bootstrap message of the wrong size; misc/socket.cc: a connection that
        // announced the wrong socket type, or an accept(2) on a broken listening socket: NCCL's
        // own bootstrap protocol broken.
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("does not loop back") || topology_computation_failed(source_file(), &lower) {
        // graph/rings.cc, trees.cc, connect.cc: the rings and trees every rank built from the
        // exchanged topology do not fit together (a ring that does not close): NCCL's own graph
        // construction failed, as when ranks read different PCI link speeds (NVIDIA/nccl#1020).
        // graph/topo.cc, paths.cc, search.cc, xml.h: NCCL could not place a device in the PCI
        // tree it detected or find a path it needs ("Attribute busid of node nic not found").
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("xml import")
        || lower.contains("nccl_topo_file")
        || lower.contains("nccl_graph_file")
        || xml_file_refused(&lower)
        || line.source.as_deref().is_some_and(|f| f.contains("msccl_parser"))
    {
        // MSCCL's executor (include/msccl/msccl_parser.h) reads the algorithm files the job names
        // (MSCCL_XML_FILES, or its algorithm directory): a file it refuses is the job's setting,
        // as a topology or graph file NCCL refuses is.
        Fact::new("nccl.topology_file").host(host).attr("text", message)
    } else if line.source.as_deref().is_some_and(|f| f.contains("nvls")) || lower.contains("nvls") {
        // transport/nvls.cc: NVLink SHARP buffers need the fabric manager's multicast objects.
        Fact::new("nccl.nvls_failed").host(host).attr("text", message)
    } else if lower.contains("attaching") && lower.contains("shared memory") && lower.contains("no such file") {
        // misc/shmutils.cc: the segment a peer announced is not there to attach to (ENOENT). Not a
        // segment that did not fit: NCCL's shared-memory handshake between two ranks broke, as in
        // releases after 2.21 (NVIDIA/nccl#1589, where going back to 2.21.5 mended it), or the
        // peer lives in another /dev/shm.
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("posix_fallocate")
        || lower.contains("shared memory segment")
        || lower.contains("/dev/shm")
        || (lower.contains("shm") && lower.contains("no space left"))
    {
        Fact::new("nccl.shm_failed").host(host)
    } else if lower.contains("ibv_modify_qp") || (lower.contains("no route to host") && lower.contains("net/ib")) {
        let error = message.rsplit(':').next().unwrap_or(message).trim().to_string();
        Fact::new("nccl.qp_connect_failed").host(host).attr("error", error)
    } else if lower.contains("unable to open device")
        || lower.contains("ibv_open_device failed")
        || lower.contains("failed to open libibverbs")
        || lower.contains("ibv_get_device_list")
    {
        // NCCL could not reach the RDMA devices from this process (no device node in the
        // container, no user-space driver): it falls back to sockets, or fails if IB was required.
        Fact::new("rdma.device_missing").host(host).attr("text", message)
    } else if (lower.contains("socket creation failed") && lower.contains("address family not supported"))
        || lower.contains("neither af_inet")
    {
        // The address NCCL picked is of a family this interface does not carry (an interface that
        // does not exist or has no address; nccl-tests#14, nccl#1837).
        Fact::new("nccl.socket_iface_suspect").host(host).attr("iface", "none").attr("text", message)
    } else if lower.contains("no socket interface found")
        || (lower.contains("nccl_socket_ifname") && (lower.contains("not found") || lower.contains("no device")))
        || lower.contains("no usable listening interface")
    {
        Fact::new("nccl.socket_iface_suspect").host(host).attr("iface", "none").attr("text", message)
    } else if lower.contains("marked as failed") && lower.contains("device") {
        // NCCL's IB resiliency (transport/net_ib/p2p_resiliency.cc, 2.29+) takes a device out of
        // service after an IBV_EVENT_PORT_ERR or a fatal device event: the port went down.
        let device = message
            .split("Device ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .map(|index| format!("NCCL's IB device {index}"))
            .unwrap_or_else(|| "an IB device".to_string());
        Fact::new("nccl.device_failed")
            .host(host)
            .attr("nic", device)
            .attr("port", "(its port)")
            .attr("state", "failed (NCCL took it out of service after a port or device error)")
            .attr("text", message)
    } else if lower.contains("connection closed by remote peer") || lower.contains("broken pipe") {
        // The socket's other end went away mid-run (misc/socket.cc): the process there exited or
        // crashed, which is why this rank's transfer failed.
        let peer = message
            .split("remote peer")
            .nth(1)
            .or_else(|| message.split(" from ").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("unknown");
        // The host whose process went away is the one to look at: it is the fact's host; the
        // rank that noticed is kept as `seen_by`.
        let peer_host = peer.split('<').next().unwrap_or(peer).trim_end_matches([',', '.', ':']);
        Fact::new("nccl.remote_closed")
            .host(peer_host)
            .attr("peer", peer)
            .attr("seen_by", host)
            .attr("rank", "unknown (the process at the other end of the socket)")
            .attr("text", message)
    } else if (lower.contains("connect to") && lower.contains("failed"))
        || lower.contains("socketstartconnect")
        || lower.contains("socketpollconnect")
        || (lower.contains("bootstrap") && (lower.contains("timed out") || lower.contains("refused")))
        || lower.contains("call to connect returned")
        // NCCL 2.2's include/socket.h: "Call to connect failed : Connection timed out".
        || lower.contains("call to connect failed")
        || socket_peer_unreachable(source_file(), &lower)
    {
        Fact::new("nccl.socket_connect_failed").host(host).attr("error", message)
    } else if lower.contains("\"iommu=pt\" from kernel command line") || lower.contains("\"amd_iommu=on\" from kernel")
    {
        // RCCL (NCCL's ROCm port, src/init.cc) warns at init when the kernel command line lacks
        // iommu=pt: advice that healthy jobs print too, not an error; it bears on peer-to-peer
        // DMA through an IOMMU.
        Fact::new("nccl.iommu_warning").host(host)
    } else if (lower.contains("cuda failure") || lower.contains("cuda error"))
        && (lower.contains("'invalid argument'")
            || lower.contains("'invalid device function'")
            || lower.contains("'named symbol not found'")
            // cudaErrorNotSupported (801): a CUDA feature NCCL itself asked for (a memory pool at
            // init, cuMem's virtual memory) that this driver, GPU or platform does not offer; the
            // NCCL build, not the job, chose it.
            || lower.contains("'operation not supported'"))
    {
        // A CUDA call NCCL itself made was refused as malformed (cudaErrorInvalidValue) or has no
        // code for this GPU (cudaErrorInvalidDeviceFunction, cudaErrorSymbolNotFound: a kernel the
        // library was not built with for this architecture): NCCL's own bug, or an NCCL built for
        // another CUDA or architecture. NVLS setup failing so is read above, as the fabric's.
        Fact::new("nccl.internal").host(host).attr("text", message)
    } else if lower.contains("cuda failure") || lower.contains("cuda error") {
        Fact::new("nccl.cuda_error").host(host).attr("error", message)
    } else {
        // No rule names this one's cause; NCCL's catalogue still says which part of NCCL printed
        // it (the line's own source location first, when NCCL printed one).
        let mut fact = Fact::new("nccl.error").host(host).attr("text", message);
        if let Some(file) = source_file() {
            fact = fact.attr("family", super::catalogue::family(file)).attr("source", file);
        }
        fact
    }
}

/// A WARN of NCCL's socket layer (its own source location, or the catalogue's) that a peer refused
/// the connection or could not be reached ("Net : Call to recv from 10.0.0.2<56843> failed :
/// Connection refused"): the same failure as a refused connect, whichever call saw it.
fn socket_peer_unreachable(file: Option<&str>, lower: &str) -> bool {
    // Before 2.18 (include/socket.h) the socket layer's messages began with "Net : ".
    (file.is_some_and(|f| super::catalogue::family(f) == "socket") || lower.starts_with("net : "))
        && ["connection refused", "no route to host", "network is unreachable"].iter().any(|w| lower.contains(w))
}

/// "socketFinalizeAccept: wrong type 4 != 3": the types of the two ends of a connection, when they
/// are the two network transports' (3, NET/Socket; 4, NET/IB), as the settings that differ.
fn transports_differ(lower: &str) -> Option<String> {
    let rest = lower.split_once("socketfinalizeaccept: wrong type ")?.1;
    let (first, second) = rest.split_once(" != ")?;
    let number = |text: &str| text.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u8>().ok();
    let name = |kind: u8| match kind {
        3 => Some("NET/Socket"),
        4 => Some("NET/IB"),
        _ => None,
    };
    let (first, second) = (number(first)?, number(second)?);
    if first == second {
        return None;
    }
    Some(format!("one rank connected over {}, the other expected {}", name(first)?, name(second)?))
}

/// Whether a WARN comes from NCCL's topology detection and graph search (its own source location,
/// or the catalogue's for a quoted message) and says that it failed, not that it falls back or
/// that a setting is wrong.
fn topology_computation_failed(file: Option<&str>, lower: &str) -> bool {
    let graph = file.is_some_and(|f| {
        // graph/xml.cc builds the topology from sysfs ("Could not find real path of
        // /sys/class/pci_bus/...": a sysfs NCCL cannot read, as under WSL2 before 2.11.4).
        [
            "graph/rings",
            "graph/trees",
            "graph/connect",
            "graph/topo",
            "graph/paths",
            "graph/search",
            "graph/xml.h",
            "graph/xml.cc",
        ]
        .iter()
        .any(|p| f.contains(p))
    });
    // Advice and settings, and a graph or topology file the user gave (read below as such).
    let advisory = [
        "falling back",
        "defaulting",
        "ignoring",
        "skipping",
        "nccl_",
        "user asked",
        "please specify",
        "xml import",
        "xml export",
        "not dumping",
    ]
    .iter()
    .any(|w| lower.contains(w));
    graph && !advisory && !xml_file_refused(lower)
}

/// graph/xml.cc refusing an XML file it was given to read: NCCL parses XML only from files, the
/// topology (NCCL_TOPO_FILE, or a cloud image's default one) and the graph (NCCL_GRAPH_FILE).
fn xml_file_refused(lower: &str) -> bool {
    ["xml parse", "xml topology has wrong version", "xml graph has wrong version", "could not open xml"]
        .iter()
        .any(|w| lower.contains(w))
}

/// A failed work completion (`Got completion ... with error 12, ... vendor err 129`), its status
/// decoded.
fn wc_error_fact(line: &NcclLine, host: &str) -> Fact {
    let message = line.message.as_str();
    // "status=12", or from 2.24 on the status's name with its number: "status=IBV_WC_RETRY_EXC_ERR(12)".
    let after_status = |r: &str| {
        let digits = r.strip_prefix("IBV_WC_").and_then(|named| named.split_once('(')).map_or(r, |(_, n)| n);
        digits.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    let status = number_after(message, "error")
        .or_else(|| message.split("status=").nth(1).and_then(after_status))
        .unwrap_or(u64::MAX);
    let status32 = u32::try_from(status).unwrap_or(u32::MAX);
    let (name, meaning) = wc_status(status32);
    let vendor = number_after(message, "vendor err").or_else(|| {
        message.split("vendor_err=").nth(1).and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
    });
    let mut fact = Fact::new("nccl.wc_error")
        .host(host)
        .attr("status", status)
        .attr("status_name", name)
        .attr("meaning", meaning)
        .attr("vendor_err", vendor.map(|v| format!("{v} ({v:#x})")).unwrap_or_else(|| "unknown".into()));
    if let Some(peer) = word_after(message, "peer") {
        let peer_host = peer.split('<').next().unwrap_or(peer);
        fact = fact.attr("peer", peer_host);
    }
    if let Some(dev) = line.dev {
        fact = fact.attr("gpu", dev);
    }
    fact
}

/// A `collective mismatch` warning, with the local and remote sizes and the peer where the line gives them.
fn collective_mismatch_fact(message: &str, host: &str) -> Fact {
    let mut fact = Fact::new("nccl.collective_mismatch").host(host);
    if let Some(local) = number_after(message, "local size") {
        fact = fact.attr("local_size", local);
    }
    if let Some(remote) = number_after(message, "remote size") {
        fact = fact.attr("remote_size", remote);
    }
    if let Some(peer) = word_after(message, "peer") {
        fact = fact.attr("peer", peer.split('<').next().unwrap_or(peer));
    }
    fact
}

/// A process as NCCL's line prefix names it: its host and pid.
type Process = (String, Option<u64>);

/// A collective call, the process that logged it and where.
type LoggedCall = (Process, CollectiveCall, Evidence);

/// One collective call as NCCL logs it with NCCL_DEBUG_SUBSYS=COLL (enqueue.cc: "Broadcast: opCount 0
/// sendbuff 0x... recvbuff 0x... count 53 datatype 4 op 0 root 0 comm 0x... [nranks=8] stream ...").
#[derive(Debug, Clone, PartialEq, Eq)]
struct CollectiveCall {
    op: String,
    op_count: String,
    count: String,
    datatype: String,
    root: String,
    comm: String,
    ranks: u64,
}

fn collective_call(message: &str) -> Option<CollectiveCall> {
    let (op, rest) = message.split_once(": opCount ")?;
    if op.is_empty() || !op.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let field = |name: &str| word_after(rest, name).map(str::to_string);
    let ranks = rest.split_once("[nranks=")?.1.split(']').next()?.parse().ok()?;
    Some(CollectiveCall {
        op: op.to_string(),
        op_count: rest.split_whitespace().next()?.to_string(),
        count: field("count")?,
        datatype: field("datatype")?,
        root: field("root").unwrap_or_default(),
        comm: field("comm")?,
        ranks,
    })
}

/// Ranks of one communicator whose calls of one operation count differ in the collective, its
/// element count, datatype or root (NVIDIA/nccl#147: the first Broadcast of 25,503,912 elements of
/// datatype 6 on rank 0 and of 53 of datatype 4 on the others): they are not running the same
/// collective, which hangs or corrupts whatever the fabric does. Communicators are told apart by
/// size only (each process logs its own address for them), so the reading is made only where every
/// process logged calls on a single communicator.
fn calls_that_differ(seen: &Observations, analysis: &mut Analysis) {
    if seen.call_comms.values().any(|comms| comms.len() > 1) {
        return;
    }
    for ((ranks, op_count), calls) in &seen.calls {
        let Some((_, first, first_evidence)) = calls.first() else { continue };
        let signature =
            |call: &CollectiveCall| (call.op.clone(), call.count.clone(), call.datatype.clone(), call.root.clone());
        // Another rank's call: a process calling again on the same communicator with the operation
        // count it logged before (nccl-tests' sizes, each an AllReduce logged as "opCount 0" by
        // NCCL 2.27) is one rank's sequence, not two ranks disagreeing. The process is known by its
        // pid and the communicator's address (a host name glued to a result row that shared its
        // output line, "0mew0:65704:...", is no other host).
        let same_rank = |(process, call, _): &&LoggedCall| {
            process.1.is_some() && process.1 == calls[0].0 .1 && call.comm == first.comm
        };
        let Some((_, other, other_evidence)) =
            calls.iter().find(|logged| signature(&logged.1) != signature(first) && !same_rank(logged))
        else {
            continue;
        };
        let describe = |call: &CollectiveCall| {
            format!("{} of {} elements of datatype {} (root {})", call.op, call.count, call.datatype, call.root)
        };
        analysis.push(
            Fact::new("nccl.collective_mismatch")
                .attr(
                    "text",
                    format!(
                        "operation {op_count} of a {ranks}-rank communicator is {} on one rank and {} on another",
                        describe(first),
                        describe(other)
                    ),
                )
                .evidence(first_evidence.clone())
                .evidence(other_evidence.clone()),
        );
        return;
    }
}

/// The NVLink paths of one GPU's line of NCCL's path dump ("GPU/0-17000 :GPU/0-17000
/// (0/5000.0/LOC) GPU/0-65000 (1/240.0/NVL) CPU/0-0 (1/24.0/PHB)"): each peer GPU reached over
/// NVLink, with the path's bandwidth.
fn record_nvlink_paths(
    message: &str,
    host: &str,
    evidence: &Evidence,
    paths: &mut BTreeMap<(String, String, String), (String, Evidence)>,
) {
    let Some((gpu, rest)) = message.split_once(" :") else { return };
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    for pair in tokens.windows(2) {
        let (peer, path) = (pair[0], pair[1]);
        let Some(fields) = path.strip_prefix('(').and_then(|p| p.strip_suffix(')')) else { continue };
        let fields: Vec<&str> = fields.split('/').collect();
        if peer.starts_with("GPU/") && peer != gpu && fields.len() == 3 && fields[2] == "NVL" {
            paths
                .entry((host.to_string(), gpu.trim().to_string(), peer.to_string()))
                .or_insert_with(|| (fields[1].to_string(), evidence.clone()));
        }
    }
}

/// A topology file whose NVLinks between two GPUs carry different bandwidths in the two
/// directions: an NVLink is one bidirectional connection (its links counted alike from either
/// GPU's side, as NVML reports them), so a file that gives GPU 0 -> GPU 1 240 GB/s and GPU 1 ->
/// GPU 0 20 GB/s was written or edited for another layout, and NCCL builds its channels on what
/// the file says (timezx's fault injection: one side's NVLink count cut from 12 to 1).
fn topology_file_nvlinks_one_way(seen: &Observations, analysis: &mut Analysis) {
    let Some(loaded) = &seen.topology_file else { return };
    for ((host, gpu, peer), (bandwidth, evidence)) in &seen.nvlink_paths {
        let Some((reverse, reverse_evidence)) = seen.nvlink_paths.get(&(host.clone(), peer.clone(), gpu.clone()))
        else {
            continue;
        };
        let parse = |b: &str| b.parse::<f64>().ok();
        if let (Some(forward), Some(backward)) = (parse(bandwidth), parse(reverse)) {
            if (forward - backward).abs() > f64::EPSILON && forward > backward {
                analysis.push(
                    Fact::new("nccl.topology_file")
                        .host(host)
                        .attr(
                            "text",
                            format!(
                                "the topology file NCCL loaded gives NVLink {gpu} -> {peer} {bandwidth} GB/s and {peer} -> {gpu} {reverse} GB/s: one link cannot differ by direction, so the file does not describe this machine"
                            ),
                        )
                        .evidence(loaded.clone())
                        .evidence(evidence.clone())
                        .evidence(reverse_evidence.clone()),
                );
                return;
            }
        }
    }
}

/// A setting given different values in different places.
fn env_mismatch(settings: &BTreeMap<String, BTreeMap<String, Vec<Evidence>>>, analysis: &mut Analysis) {
    for (name, values) in settings {
        if values.len() > 1 {
            let listed: Vec<String> = values.keys().map(|v| format!("{name}={v}")).collect();
            let mut fact = Fact::new("nccl.env_mismatch").attr("name", name).attr("values", listed.join(" vs "));
            for evidence in values.values().filter_map(|e| e.first()) {
                fact = fact.evidence(evidence.clone());
            }
            analysis.push(fact);
        }
    }
}

/// The NIC each rank sends or receives its inter-node traffic on, by name, in the rank table.
fn rank_nics(channels: &[NetChannel], host_nics: &BTreeMap<String, Vec<String>>, analysis: &mut Analysis) {
    for channel in channels {
        let rank = if channel.send { channel.from } else { channel.to };
        let nic = channel.host.as_ref().and_then(|h| host_nics.get(h)).and_then(|n| n.get(channel.nic_index as usize));
        if let Some(nic) = nic {
            analysis.ranks.nccl_nics.entry(rank).or_insert_with(|| nic.clone());
        }
    }
}

/// Hosts of one job whose NCCL lines take the two forms of NCCL's level (`NcclLine::named_level`),
/// each host only one: their NCCL releases lie on both sides of 2.3, a version mismatch the logs
/// show without a version line. `older`: the hosts with lines of the old form.
fn versions_by_line_form(logs: &[NcclLog], older: &BTreeMap<&str, Evidence>, analysis: &mut Analysis) {
    let newer = logs
        .iter()
        .flat_map(|log| log.lines.iter().map(move |line| (log, line)))
        .find(|(_, line)| line.named_level && line.host.as_deref().is_some_and(|host| !older.contains_key(host)));
    let Some((log, line)) = newer else { return };
    let new_host = line.host.as_deref().unwrap_or_default();
    // A host that printed both forms (a log quoting an old line) is no host of the old release.
    let hosts_of_both: BTreeSet<&str> = logs
        .iter()
        .flat_map(|log| log.lines.iter())
        .filter(|line| line.named_level)
        .filter_map(|line| line.host.as_deref())
        .filter(|host| older.contains_key(host))
        .collect();
    let Some((old_host, old_line)) = older.iter().find(|(host, _)| !hosts_of_both.contains(*host)) else { return };
    analysis.push(
        Fact::new("nccl.version_mismatch")
            .attr("what", "NCCL version")
            .attr(
                "values",
                format!("before 2.3 on {old_host} (its levels without the NCCL prefix) vs 2.3 or later on {new_host}"),
            )
            .evidence(old_line.clone())
            .evidence(log.evidence(line)),
    );
}

fn mismatch_fact(analysis: &mut Analysis, name: &str, what: &str, values: &BTreeMap<String, Vec<Evidence>>) {
    if values.len() < 2 {
        return;
    }
    let listed: Vec<&str> = values.keys().map(String::as_str).collect();
    let mut fact = Fact::new(name).attr("what", what).attr("values", listed.join(" vs "));
    for evidence in values.values().filter_map(|e| e.first()) {
        fact = fact.evidence(evidence.clone());
    }
    analysis.push(fact);
}

/// One connection a rank set up: "Channel 00/0 : 1[89000] -> 0[3d000] via P2P/IPC" (transport/p2p.cc,
/// shm.cc and net.cc print it as the sending rank selects the transport).
#[derive(Debug, Clone)]
struct ChannelLink {
    sender: u64,
    receiver: u64,
    /// A transport that only connects GPUs of one host: P2P (CUDA IPC, NVLink, cuMem) and shared
    /// memory ("SHM", and "direct shared memory" in releases before 2.12). NET and CollNet cross hosts.
    inside_host: bool,
    host: String,
    evidence: Evidence,
}

/// The sender, receiver and whether the transport stays inside one host, of a channel line:
/// "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read", "Channel 00/0 : 255[7] -> 0[0] [receive] via
/// NET/IB/7/GDRDMA". Read by single characters (memchr), since most lines of a large job's log are
/// these.
fn channel_link(message: &str) -> Option<(u64, u64, bool)> {
    let (_, rest) = message.strip_prefix("Channel ")?.split_once(':')?;
    let (sender, rest) = rest.split_once('[')?;
    let (_, rest) = rest.split_once('>')?;
    let (receiver, rest) = rest.split_once('[')?;
    let (_, rest) = rest.split_once(']')?;
    let mut rest = rest.trim_start();
    // "[send]" or "[receive]" before the transport on network connections.
    if rest.starts_with('[') {
        rest = rest.split_once(']')?.1.trim_start();
    }
    let transport = rest.strip_prefix("via ")?.trim_start();
    let inside_host =
        ["P2P/", "SHM/", "SHM ", "direct shared memory", "CUMEM"].iter().any(|name| transport.starts_with(name))
            || transport == "SHM"
            || transport == "P2P";
    Some((sender.trim().parse().ok()?, receiver.trim().parse().ok()?, inside_host))
}

/// A device NCCL could not open ("NET/IB : Unable to open device mlx5_58", "Call to ibv_open_device
/// failed") on a host where it then listed others to use ("NET/IB : Using [0]mlx5_1:1/RoCE ...") is
/// no host without RDMA: a pod handed more device nodes than it may open (a Kubernetes RDMA device
/// plugin's share) runs over the ones it can.
/// Such lines stay cited (`rdma.device_skipped`), so they are not quoted as errors nothing read.
fn devices_left_open(seen: &Observations, analysis: &mut Analysis) {
    for fact in analysis.facts.iter_mut().filter(|fact| fact.name == "rdma.device_missing") {
        let opened_others =
            fact.get("host").and_then(|host| seen.host_nics.get(host)).is_some_and(|nics| !nics.is_empty());
        let one_device = fact.get("text").is_some_and(|text| {
            let lower = text.to_ascii_lowercase();
            lower.contains("unable to open device") || lower.contains("ibv_open_device failed")
        });
        if opened_others && one_device {
            fact.name = "rdma.device_skipped".to_string();
        }
    }
}

/// Ranks that never reached Init COMPLETE while most of their communicator did. Only judged when the
/// log plainly covers the communicator (at least half its ranks completed): an excerpt with a few
/// ranks says nothing about the others.
fn missing_ranks(
    comms: &Communicators,
    channel_sources: &BTreeSet<u64>,
    channel_links: &[ChannelLink],
    analysis: &mut Analysis,
) {
    for (key, (nranks, ranks)) in comms {
        let nranks = *nranks;
        if !(2..=1 << 16).contains(&nranks) {
            continue;
        }
        let completed: BTreeSet<u64> = ranks.iter().filter(|(_, s)| s.1).map(|(r, _)| *r).collect();
        // Channel lines do not name their communicator: they vouch for a rank only when one
        // communicator is in the log. The sender of a connection was there; so was its receiver
        // when the sender completed its init, which waits for every peer it connects to to send
        // its end of the connection (transport.cc, ncclTransportP2pSetup).
        let joined: BTreeSet<u64> =
            channel_links.iter().filter(|link| completed.contains(&link.sender)).map(|link| link.receiver).collect();
        let connected = |rank: u64| comms.len() == 1 && (channel_sources.contains(&rank) || joined.contains(&rank));
        if completed.is_empty() || (completed.len() as u64) * 2 < nranks || completed.len() as u64 >= nranks {
            continue;
        }
        for rank in (0..nranks).filter(|r| !completed.contains(r) && !connected(*r)) {
            let started = ranks.get(&rank).is_some_and(|s| s.0);
            let mut fact =
                Fact::new("nccl.rank_missing").attr("rank", rank).attr("nranks", nranks).attr("comm", key).attr(
                    "state",
                    if started { "started init but never completed it" } else { "never appeared in the log" },
                );
            if let Some(entry) = analysis.ranks.get(rank) {
                if let Some(evidence) = entry.evidence.first() {
                    fact = fact.evidence(evidence.clone());
                }
            }
            analysis.push(fact);
        }
    }
}

/// Connects refused on every retry: NCCL retries a refused connect (the peer may still be
/// starting its listener), so one refusal is no fault, but three or more from a host mean nothing
/// listens at the address the peer announced (its process is gone, or the address is not its).
fn refused_again_and_again(seen: &Observations, analysis: &mut Analysis) {
    const REFUSALS: usize = 3;
    for (host, refusals) in &seen.refused_retries {
        if refusals.len() >= REFUSALS {
            let mut fact = Fact::new("nccl.network_unreachable").host(host).attr("refusals", refusals.len());
            for evidence in refusals.iter().take(3) {
                fact = fact.evidence(evidence.clone());
            }
            analysis.push(fact);
        }
    }
}

/// Where a rank of a communicator runs, from the lines that name the communicator's rank, size and
/// GPU ("comm 0x55 rank 1 nranks 2 cudaDev 0 busId 86000 commId 0x9d - Init COMPLETE", and the
/// same line at "Abort COMPLETE" or "Destroy COMPLETE"). Releases before 2.19 print no commId; their
/// lines are kept by the communicator's size, and only ranks of different processes count (one
/// process may hold communicators of one size in which its ranks differ).
fn record_communicator_gpu(line: &NcclLine, host: &str, evidence: &Evidence, comm_gpus: &mut CommunicatorGpus) {
    let message = line.message.as_str();
    if host == crate::fact::UNKNOWN_HOST || !message.contains("comm 0x") {
        return;
    }
    let (Some(bus), Some(rank), Some(nranks)) =
        (word_after(message, "busId"), number_after(message, "rank"), number_after(message, "nranks"))
    else {
        return;
    };
    let comm = match word_after(message, "commId") {
        Some(comm) => comm.to_string(),
        None if line.pid.is_some() => format!("of {nranks} ranks"),
        None => return,
    };
    let ranks = comm_gpus.entry(comm).or_default().entry((host.to_string(), bus.to_string())).or_default();
    ranks.entry(rank).or_insert((line.pid, evidence.clone()));
}

/// Two ranks of one communicator that start on the same GPU of the same host (their lines name one
/// commId, host and busId; or, without a commId, one size, host and busId from two processes): what
/// NCCL refuses as a duplicate GPU (init.cc, "Duplicate GPU detected"), read even where that WARN
/// was not pasted (pytorch/examples#1279: two ranks of a two-rank job, both on busId 86000).
fn shared_gpus(comm_gpus: &CommunicatorGpus, analysis: &mut Analysis) {
    if analysis.has("nccl.duplicate_gpu") {
        return;
    }
    let shared = comm_gpus.iter().find_map(|(comm, places)| {
        places
            .iter()
            .find(|(_, ranks)| {
                let processes: BTreeSet<Option<u64>> = ranks.values().map(|(pid, _)| *pid).collect();
                ranks.len() >= 2 && (comm.starts_with("0x") || processes.len() == ranks.len())
            })
            .map(|(place, ranks)| (comm, place, ranks))
    });
    if let Some((comm, (host, bus), ranks)) = shared {
        let named: Vec<String> = ranks.keys().map(u64::to_string).collect();
        let mut fact = Fact::new("nccl.duplicate_gpu")
            .host(host)
            .attr("text", format!("ranks {} of communicator {comm} all run on busId {bus}", named.join(" and ")));
        for (_, evidence) in ranks.values().take(4) {
            fact = fact.evidence(evidence.clone());
        }
        analysis.push(fact);
    }
}

/// A job whose ranks are all on one host never uses the network, so an RDMA device it could not
/// open did not matter to it: NCCL said its communicator spans one node, or every rank of a
/// communicator announced its init from the same host.
fn single_host(seen: &Observations, analysis: &mut Analysis) {
    if analysis.has("nccl.single_host") {
        return;
    }
    if let Some((host, evidence)) = &seen.one_node {
        analysis.push(Fact::new("nccl.single_host").host(host).evidence(evidence.clone()));
        return;
    }
    // A communicator all of whose ranks were seen.
    let whole = seen.comms.values().filter(|(nranks, ranks)| ranks.len() as u64 >= *nranks);
    if let Some(fact) = whole.filter_map(|(_, ranks)| analysis.ranks.single_host(ranks.keys().copied())).next() {
        analysis.push(fact);
        return;
    }
    // A communicator whose ranks are all joined by transports that never leave a host (P2P, shared
    // memory): GPUs that share memory are on one host, whatever host names the lines carry. Its
    // size is its Init lines' nranks, or, where the paste kept none, the ranks of its rings.
    let comms: Vec<&(u64, _)> = seen.comms.values().collect();
    let nranks = match (&comms[..], seen.ring_members.len()) {
        ([(nranks, _)], _) => Some(*nranks),
        ([], 1) => seen.ring_members.first().map(|members| members.len() as u64),
        _ => None,
    };
    if let Some(nranks) = nranks {
        if let Some(link) = one_host_by_links(nranks, &seen.channel_links) {
            analysis.push(
                Fact::new("nccl.single_host")
                    .host(&link.host)
                    .attr("ranks", nranks)
                    .attr("read", "every rank joined to the others over P2P or shared memory")
                    .evidence(link.evidence.clone()),
            );
        }
    }
}

/// The rank of a "Trees [0] 1/8/-1->0->-1 [1] ..." line (init.cc: each channel's children, the rank
/// and its parent) when a channel's tree gives it two children or more. Inside a host NCCL builds
/// each tree as a chain, one child a rank (graph/connect.cc, ncclTopoPreset); further children are
/// the heads of other hosts' chains, added only by connectTrees between nodes.
fn tree_with_children_of_other_hosts(trees: &str) -> Option<u64> {
    trees.split_whitespace().filter(|t| t.contains("->")).find_map(|entry| {
        let mut parts = entry.split("->");
        let children = parts.next()?.split('/').filter(|c| c.parse::<i64>().is_ok_and(|c| c >= 0)).count();
        let rank = parts.next()?.parse().ok()?;
        (children >= 2).then_some(rank)
    })
}

/// The ranks of a ring as rank 0 lists them: "Channel 00/02 :    0   1   2   3" (graph/connect.cc),
/// when they are 0..n in some order.
fn ring_members(message: &str) -> Option<BTreeSet<u64>> {
    let (head, ranks) = message.strip_prefix("Channel ")?.split_once(':')?;
    head.contains('/').then_some(())?;
    let members: BTreeSet<u64> = ranks.split_whitespace().map(|r| r.parse().ok()).collect::<Option<_>>()?;
    let n = members.len() as u64;
    (n >= 2 && members.iter().next_back() == Some(&(n - 1))).then_some(members)
}

/// The first of `links` when the ranks 0..`nranks` are all joined to each other by connections
/// that stay inside one host.
fn one_host_by_links(nranks: u64, links: &[ChannelLink]) -> Option<&ChannelLink> {
    if !(2..=1 << 16).contains(&nranks) {
        return None;
    }
    let inside: Vec<&ChannelLink> =
        links.iter().filter(|link| link.inside_host && link.sender < nranks && link.receiver < nranks).collect();
    let mut group: Vec<u64> = (0..nranks).collect();
    fn root(group: &mut [u64], mut rank: u64) -> u64 {
        while group[rank as usize] != rank {
            group[rank as usize] = group[group[rank as usize] as usize];
            rank = group[rank as usize];
        }
        rank
    }
    for link in &inside {
        let (a, b) = (root(&mut group, link.sender), root(&mut group, link.receiver));
        group[a as usize] = b;
    }
    let first = root(&mut group, 0);
    ((1..nranks).all(|rank| root(&mut group, rank) == first)).then(|| inside.first().copied()).flatten()
}

/// Inter-node connections whose two ends use different NICs (by index on each host, or by name when
/// the hosts' NET/IB lists are known). On a rail-only fabric NIC k of one host reaches only NIC k of
/// the others, so such traffic must cross rails through the spine or fails (NCCL_CROSS_NIC).
fn cross_nic(channels: &[NetChannel], host_nics: &BTreeMap<String, Vec<String>>, analysis: &mut Analysis) {
    let name_of = |c: &NetChannel| -> String {
        c.host
            .as_ref()
            .and_then(|h| host_nics.get(h))
            .and_then(|nics| nics.get(c.nic_index as usize).cloned())
            .unwrap_or_else(|| format!("NIC index {}", c.nic_index))
    };
    // A channel quoted without its number ("?") cannot be paired with its other side.
    let receives: BTreeMap<(&str, u64, u64), &NetChannel> = channels
        .iter()
        .filter(|c| !c.send && c.channel != "?")
        .map(|c| ((c.channel.as_str(), c.from, c.to), c))
        .collect();
    let mut reported = 0;
    for send in channels.iter().filter(|c| c.send) {
        let Some(receive) = receives.get(&(send.channel.as_str(), send.from, send.to)) else { continue };
        if send.host.is_some() && send.host == receive.host {
            continue;
        }
        if send.nic_index != receive.nic_index {
            analysis.push(
                Fact::new("nccl.cross_nic")
                    .attr("channel", &send.channel)
                    .attr("from_rank", send.from)
                    .attr("to_rank", send.to)
                    .attr("send_nic", name_of(send))
                    .attr("recv_nic", name_of(receive))
                    .attr("host", send.host.clone().unwrap_or_default())
                    .attr("peer", receive.host.clone().unwrap_or_default())
                    .evidence(send.evidence.clone())
                    .evidence(receive.evidence.clone()),
            );
            reported += 1;
            if reported >= 8 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts NCCL's reader finds in one log.
    fn facts(text: &str) -> Vec<Fact> {
        let mut analysis = Analysis::default();
        analyze(&[parse("log", text)], &mut analysis);
        analysis.facts
    }

    /// NumericalEarth/Breeze.jl's Perlmutter notes (heldout279): NCCL's lines quoted without their
    /// prefix or level, sockets chosen on a Slingshot interface: the OFI net plugin that reaches
    /// Slingshot's RDMA was not loaded. Sockets on an Ethernet port, or the plugin's network chosen,
    /// are not this.
    #[test]
    fn sockets_chosen_on_a_slingshot_interface() {
        let text = "NET/Plugin: Could not find: libnccl-net.so\n\
                    Using network Socket\n\
                    NET/Socket : GPU Direct RDMA Disabled for HCA 'hsn0'\n";
        let missing = |text: &str| facts(text).into_iter().filter(|f| f.name == "rdma.device_missing").count();
        assert_eq!(missing(text), 1, "{:?}", facts(text));
        let listed = "h1:1:2 [0] NCCL INFO NET/Socket : Using [0]hsn0:10.100.0.5<0> [1]hsn1:10.100.0.6<0>\n\
                      h1:1:2 [0] NCCL INFO Using network Socket\n";
        assert_eq!(missing(listed), 1);
        assert_eq!(missing(&text.replace("hsn0", "eth0")), 0);
        assert_eq!(missing(&listed.replace("Using network Socket", "Using network AWS Libfabric")), 0);
        // Another tool's line that begins like NCCL's chosen network is not one of NCCL's.
        assert!(parse("log", "Using network interface eth0 for the dashboard\n").lines.is_empty());
    }

    /// NVIDIA/nccl#1190 (heldout74): a healthy two-rank init on one host, its bootstrap on loopback,
    /// the paste cut before rank 0's Init COMPLETE. Rank 1 completed its init with a shared-memory
    /// connection to rank 0, which took part in it.
    #[test]
    fn ranks_joined_over_shared_memory_are_one_host_and_the_peer_of_a_completed_rank_was_there() {
        let text = "NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n\
                    NCCL INFO Channel 00 : 1[89000] -> 0[3d000] via direct shared memory\n\
                    NCCL INFO comm 0x7fac840181a0 rank 1 nranks 2 cudaDev 0 busId 89000 - Init COMPLETE\n";
        let names = |text: &str| facts(text).into_iter().map(|f| f.name).collect::<Vec<_>>();
        let found = names(text);
        assert!(found.contains(&"nccl.single_host".to_string()), "{found:?}");
        assert!(!found.contains(&"nccl.rank_missing".to_string()), "{found:?}");
        // Over the network the two ranks may be on two hosts.
        let found = names(&text.replace("via direct shared memory", "via NET/Socket/0"));
        assert!(!found.contains(&"nccl.single_host".to_string()), "{found:?}");
        // A third rank that no connection reaches and that never completed is still missing, and
        // the two joined over P2P are not the whole communicator.
        let three = "NCCL INFO Channel 00 : 0[3d000] -> 1[89000] via P2P/IPC\n\
                     NCCL INFO Channel 00 : 1[89000] -> 0[3d000] via P2P/IPC\n\
                     NCCL INFO comm 0x7fac840181a0 rank 0 nranks 3 cudaDev 0 busId 3d000 - Init COMPLETE\n\
                     NCCL INFO comm 0x7fac840181a0 rank 1 nranks 3 cudaDev 1 busId 89000 - Init COMPLETE\n";
        let missing: Vec<Fact> = facts(three).into_iter().filter(|f| f.name == "nccl.rank_missing").collect();
        assert_eq!(missing.iter().map(|f| f.get("rank").unwrap_or_default()).collect::<Vec<_>>(), ["2"], "{missing:?}");
        assert!(!names(three).contains(&"nccl.single_host".to_string()));
        // THUDM/GLM#123 (heldout77): no Init line kept, the ring rank 0 printed names the ranks.
        let rings = "h:1919:1999 [0] NCCL INFO Channel 00/02 :    0   1\n\
                     h:1919:1999 [0] NCCL INFO Channel 00 : 0[4f000] -> 1[d1000] via direct shared memory\n";
        assert!(names(rings).contains(&"nccl.single_host".to_string()));
        assert!(!names(&rings.replace(":    0   1", ":    0   1   2")).contains(&"nccl.single_host".to_string()));
    }

    /// zai-org/ImageReward#65 (heldout77): two of a pod's RDMA devices cannot be opened, NCCL uses the
    /// other two: no host without RDMA, and the lines stay cited.
    #[test]
    fn a_device_left_unopened_beside_devices_in_use_is_no_missing_rdma() {
        let text = "pod:80744:80744 [1] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_58\n\
                    pod:80744:80744 [1] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE [1]mlx5_18:1/RoCE ; OOB eth0:33.117.221.247<0>\n";
        let found: Vec<String> = facts(text).into_iter().map(|f| f.name).collect();
        assert!(found.contains(&"rdma.device_skipped".to_string()), "{found:?}");
        assert!(!found.contains(&"rdma.device_missing".to_string()), "{found:?}");
        let alone: Vec<String> = facts(text.lines().next().unwrap_or_default()).into_iter().map(|f| f.name).collect();
        assert!(alone.contains(&"rdma.device_missing".to_string()), "{alone:?}");
    }

    /// NVIDIA/nccl#302 (a ring through the RoCE port among InfiniBand rails), the ML Engineering
    /// book's list (the same mix, nothing else known) and AMD-AGI/sand-pipeline (the same mix on a
    /// healthy one-node job).
    #[test]
    fn a_roce_port_among_infiniband_rails_matters_where_the_job_spans_hosts() {
        let using = "crow-7:7240:7240 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB [1]mlx5_0:1/IB [2]mlx5_2:1/RoCE [3]mlx5_4:1/IB ; OOB eth0:10.100.72.18<0>\n";
        let mixed = |text: &str| facts(text).into_iter().find(|f| f.name == "nccl.ib_hca_mixed");
        let alone = mixed(using).expect("the list alone");
        assert_eq!((alone.get("nics"), alone.get("used")), (Some("mlx5_2"), None));
        let ring =
            format!("{using}crow-7:7240:7401 [0] NCCL INFO Ring 00 : 51[3d000] -> 56[1a000] [receive] via NET/IB/2\n");
        assert_eq!(mixed(&ring).expect("used").get("used"), Some("yes"));
        let other = ring.replace("NET/IB/2", "NET/IB/1");
        assert_eq!(mixed(&other).expect("not used").get("used"), None);
        // odissei-data/nccl-tests (heldout75): a healthy two-host run whose channels, one per NIC and
        // more, all go over the InfiniBand rails; the RoCE port carries nothing.
        let rails: String = (0..4)
            .map(|c| {
                format!(
                    "crow-7:7240:7401 [0] NCCL INFO Channel {c:02}/0 : 51[3d000] -> 56[1a000] [send] via NET/IB/{}\n",
                    [0, 1, 3, 0][c]
                )
            })
            .collect();
        assert!(mixed(&format!("{using}{rails}")).is_none(), "a port no channel uses");
        let one_node = format!("{using}crow-7:7240:7401 [0] NCCL INFO comm 0x2e40c290 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n");
        assert!(mixed(&one_node).is_none(), "a one-host job sends nothing over any NIC");
    }

    /// rxsalad/rail-optimized's lab guide (heldout156): NCCL_IB_HCA=mlx5_0,mlx5_1 matched mlx5_10 to
    /// mlx5_19 by prefix, RoCE rails and InfiniBand ports with SHARP in one list that the document
    /// wrapped over three lines; a list of SHARP ports alone is InfiniBand.
    #[test]
    fn sharp_ports_and_a_wrapped_device_list_are_read_rail_optimized() {
        let wrapped = "  NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_10:1/RoCE\n                      [4]mlx5_12:1/RoCE [5]mlx5_13:1/RoCE\n                      [8]mlx5_16:1/IB/SHARP [9]mlx5_17:1/IB/SHARP\n";
        let mixed = facts(wrapped).into_iter().find(|f| f.name == "nccl.ib_hca_mixed").expect("RoCE among IB");
        assert_eq!(mixed.get("nics"), Some("mlx5_0, mlx5_1, mlx5_10, mlx5_12, mlx5_13"));
        let sharp = "n3:2331:2666 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB/SHARP; OOB ib0:192.168.0.103<0>\n";
        let found = facts(sharp);
        assert!(found.iter().any(|f| f.name == "rdma.infiniband"), "{found:?}");
        // NVIDIA/nccl#1000: the same mix on a host whose bootstrap failed before any channel.
        let bootstrap = sharp.replace("[1]mlx5_1:1/IB/SHARP", "[1]mlx5_8:1/RoCE");
        assert!(facts(&bootstrap).iter().any(|f| f.name == "nccl.ib_hca_mixed"));
        let failed = format!("{bootstrap}n3:2331:2658 [3] NCCL INFO bootstrap.cc:270 -> 2\n");
        assert!(facts(&failed).iter().all(|f| f.name != "nccl.ib_hca_mixed"), "the bootstrap failed first");
        let closed =
            "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.1<0>\n    [1]mlx5_16:1/IB/SHARP\n";
        assert!(facts(closed).iter().all(|f| f.name != "nccl.ib_hca_mixed"), "the list ended before");
    }

    /// vllm-project/vllm#58179: NCCL 2.31's wording of a collective left without an algorithm,
    /// pasted without its prefix.
    #[test]
    fn a_collective_without_an_algorithm_in_the_newest_wording() {
        let text = "No algorithm/protocol nor symKernelId available for function Broadcast with datatype ncclInt8.\nNCCL_ALGO was set to allreduce:tree. NCCL_PROTO was set to Simple.\n";
        assert!(facts(text).iter().any(|f| f.name == "nccl.no_algorithm"));
        assert!(!facts("a note: No algorithm/protocol nor symKernelId available (NCCL)\n")
            .iter()
            .any(|f| f.name == "nccl.no_algorithm"));
    }

    /// NVIDIA/nccl#147: the first Broadcast called with other arguments on rank 0 than on the
    /// others; the same calls everywhere, or calls of two communicators in one process, say nothing.
    #[test]
    fn collective_calls_that_differ_between_ranks() {
        let call = |rank: u32, pid: u32, count: u32, datatype: u32| {
            format!("learnfair062:{pid}:{pid} [{rank}] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f88e4000000 recvbuff 0x7f88e4000000 count {count} datatype {datatype} op 0 root 0 comm 0x7f88e005a2{rank}0 [nranks=8] stream 0x55f\n")
        };
        let differ = [call(0, 32615, 25503912, 6), call(1, 32617, 53, 4), call(2, 32619, 53, 4)].concat();
        let found = facts(&differ);
        let mismatch = found.iter().find(|f| f.name == "nccl.collective_mismatch").expect("mismatch");
        assert!(
            mismatch.get("text").is_some_and(|t| t.contains("25503912") && t.contains("of 53 elements")),
            "{mismatch:?}"
        );
        let same = [call(0, 32615, 53, 4), call(1, 32617, 53, 4)].concat();
        let has = |found: &[Fact], name: &str| found.iter().any(|f| f.name == name);
        assert!(!has(&facts(&same), "nccl.collective_mismatch"));
        let two_comms =
            format!("{differ}{}", call(0, 32615, 53, 4).replace("comm 0x7f88e005a200", "comm 0x7f88e0099900"));
        assert!(!has(&facts(&two_comms), "nccl.collective_mismatch"), "two communicators in one process");
    }

    /// Timez-zx/nccl-tests' fault log: one process calling AllReduce again on its communicator
    /// (nccl-tests' next size, logged as "opCount 0" again, its host name glued to a result row)
    /// is one rank's sequence; another process doing so with other arguments is a mismatch.
    #[test]
    fn one_rank_calling_again_with_another_size_is_no_mismatch_timezx() {
        let call = |glue: &str, pid: u32, comm: &str, count: u32| {
            format!("{glue}mew0:{pid}:{pid} [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x720000000 recvbuff 0x920000000 count {count} datatype 7 op 0 root 0 comm {comm} [nranks=2] stream 0x55d5f4d50b60\n")
        };
        let one_rank = [
            call("   536870912     134217728     float     sum      -1", 65704, "0x55d5f5ac09e0", 134217728),
            call("    18825   28.52   28.52      0", 65704, "0x55d5f5ac09e0", 134217728),
            call("  1073741824     268435456     float     sum      -1", 65704, "0x55d5f5ac09e0", 268435456),
        ]
        .concat();
        let mismatch = |text: &str| facts(text).iter().any(|f| f.name == "nccl.collective_mismatch");
        assert!(!mismatch(&one_rank));
        let two_ranks =
            [call("", 65704, "0x55d5f5ac09e0", 134217728), call("", 65705, "0x55d5f5bca580", 268435456)].concat();
        assert!(mismatch(&two_ranks));
    }

    /// Timez-zx/nccl-tests' fault injection: a topology file whose NVLink between two GPUs is 240
    /// GB/s one way and 20 GB/s the other; the same paths detected without a file, or alike both
    /// ways, are no topology-file fault.
    #[test]
    fn a_topology_file_whose_nvlink_differs_by_direction_timezx() {
        let loaded = "mew0:65704:65723 [1] NCCL INFO Loading topology file /home/zx/nccl-tests/topo_fail.xml\n";
        let paths = |back: &str| {
            format!("mew0:65704:65723 [1] NCCL INFO GPU/0-17000 :GPU/0-17000 (0/5000.0/LOC) GPU/0-65000 (1/240.0/NVL) CPU/0-0 (1/24.0/PHB) \nmew0:65704:65723 [1] NCCL INFO GPU/0-65000 :GPU/0-17000 (1/{back}/NVL) GPU/0-65000 (0/5000.0/LOC) CPU/0-0 (1/24.0/PHB) \n")
        };
        let file_fault = |text: &str| facts(text).into_iter().find(|f| f.name == "nccl.topology_file");
        let fact = file_fault(&format!("{loaded}{}", paths("20.0"))).expect("one-way NVLink");
        assert!(fact.get("text").is_some_and(|t| t.contains("GPU/0-17000 -> GPU/0-65000 240.0 GB/s")), "{fact:?}");
        assert!(file_fault(&paths("20.0")).is_none(), "detected, not loaded from a file");
        assert!(file_fault(&format!("{loaded}{}", paths("240.0"))).is_none());
    }

    /// NVIDIA/nccl#1637: NCCL 2.25.1 on an RTX 5090, its kernels' shared memory past the GPU's.
    #[test]
    fn kernels_that_need_more_shared_memory_than_the_gpu_offers() {
        let line = "localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n";
        assert!(facts(line).iter().any(|f| f.name == "nccl.internal"));
        assert!(!facts("h:1:2 [0] NCCL INFO ncclMaxSharedMem 40000\n").iter().any(|f| f.name == "nccl.internal"));
    }

    /// sugarlxn/nccl_test (heldout154): four ranks of one host writing one file, two writes run
    /// together; the host is still the one host, so the job's missing NET/IB is that of a one-host
    /// job.
    #[test]
    fn two_ranks_writes_run_together_name_one_host_sugarlxn() {
        let joined = parse_line(1, "stone:2984736:2stone:2984737:2984737 [2] NCCL INFO PROFILER/Plugin: Loaded")
            .expect("a line");
        assert_eq!(joined.host.as_deref(), Some("stone"));
        let log = "stone:2984738:2984738 [3] NCCL INFO NET/IB : No device found.\nstone:2984736:2stone:2984737:2984737 [2] NCCL INFO PROFILER/Plugin: Loaded Inspector (v5)\n";
        assert!(facts(log).iter().all(|f| f.name != "rdma.device_missing"), "{:?}", facts(log));
    }

    /// aws-neuron/aws-neuron-sdk#851: Neuron's CCOM prints NCCL's lines under its own name.
    #[test]
    fn neurons_collectives_lines_are_nccls() {
        let line = "2024-May-21 16:16:20.0229 58091:59050 [-1] bootstrap.cc:95 CCOM WARN Timeout waiting for incoming connection (waited 120 sec), [CommInitRankDev/-4]";
        let parsed = parse_line(1, line).expect("an NCCL line");
        assert!(matches!(parsed.level, Level::Warn));
        assert!(parsed.message.starts_with("Timeout waiting for incoming connection"), "{}", parsed.message);
        assert!(parsed.named_level, "a named level, not a release before 2.3");
        assert!(parse_line(1, "the CCOM team met at noon").is_none());
    }

    /// horovod#666: one host prints NCCL 2.2's levels without NCCL's name, the other 2.3's with it;
    /// a host that prints both (a log that quotes an old line) and one form alone say nothing.
    #[test]
    fn hosts_whose_lines_differ_in_nccls_prefix_run_two_releases() {
        let old = "seyun:17283:17549 [3] include/socket.h:371 WARN Connection closed by remote peer\n";
        let new = "vclab-server-08:27377:27554 [1] NCCL INFO NET : Using interface eno2:115.145.173.234<0>\n";
        let found = facts(&format!("{old}{new}"));
        let mismatch = found.iter().find(|f| f.name == "nccl.version_mismatch").expect("two releases");
        assert_eq!(
            mismatch.get("values"),
            Some("before 2.3 on seyun (its levels without the NCCL prefix) vs 2.3 or later on vclab-server-08")
        );
        assert_eq!(mismatch.evidence.iter().map(|e| e.line).collect::<Vec<_>>(), [1, 2]);
        let both = "seyun:1:2 [0] NCCL INFO NET : Using interface eno2:10.0.0.1<0>\n";
        assert!(facts(&format!("{old}{both}{new}")).iter().all(|f| f.name != "nccl.version_mismatch"));
        assert!(facts(old).iter().all(|f| f.name != "nccl.version_mismatch"));
    }

    /// nccl#733: NCCL's device list with every port InfiniBand; one RoCE port among them is not.
    #[test]
    fn a_device_list_of_infiniband_ports_says_infiniband() {
        let ib = "task-7700-94lc9:73:73 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:172.17.80.45<0>\n";
        let found = facts(ib);
        let fact = found.iter().find(|f| f.name == "rdma.infiniband").expect("infiniband");
        assert_eq!(fact.get("nics"), Some("mlx5_0, mlx5_1"));
        let mixed = ib.replace("mlx5_1:1/IB", "mlx5_1:1/RoCE");
        assert!(facts(&mixed).iter().all(|f| f.name != "rdma.infiniband"));
    }

    /// nccl-tests#294 (heldout47): the host bootstraps on ens7 and then dials an address of no
    /// family, which came from a peer; nccl#1837 (train): no interface was found, so none is named.
    #[test]
    fn an_address_of_no_family_is_a_broken_bootstrap_where_the_host_found_its_interface() {
        let garbled = "h100-4:739788:739788 [2] NCCL INFO Bootstrap : Using ens7:172.27.32.104<0>\nh100-4:739788:739878 [2] misc/socket.cc:397 NCCL WARN Net : connecting to address  with family 33621 is neither AF_INET(2) nor AF_INET6(10)\n";
        let found = facts(garbled);
        let internal: Vec<&Fact> = found.iter().filter(|f| f.name == "nccl.internal").collect();
        assert_eq!(internal.len(), 1, "{found:?}");
        assert!(internal[0].get("text").is_some_and(|t| t.contains("172.27.32.104")));
        assert!(!found.iter().any(|f| f.name == "nccl.socket_iface_suspect"), "{found:?}");
        let unset = "[trainer0|0]:twshared1016:1958:1958 [0] NCCL INFO NCCL_SOCKET_IFNAME set to eth2\n[trainer0|0]:twshared1016:1958:1990 [0] misc/socket.cc:397 NCCL WARN Net : connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)\n";
        assert!(facts(unset).iter().any(|f| f.name == "nccl.socket_iface_suspect"));
    }

    /// gpustack/gpustack#2275: this host bootstraps on ens3 (172.16.0.16) and cannot reach its peer
    /// at 172.21.0.1, the gateway of a Docker network on the peer: the peer's interface is the
    /// suspect. A peer on the same Docker network as this host's own address is no suspect.
    #[test]
    fn a_peer_that_advertised_its_docker_network_is_a_socket_suspect() {
        let log = "gpu:77952:77952 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.21.0.1<57093> failed : Software caused connection abort\n\
                   gpu:77952:77952 [0] NCCL INFO Bootstrap : Using ens3:172.16.0.16<0>\n";
        let suspects = |text: &str| -> Vec<String> {
            let mut analysis = Analysis::default();
            analyze(&[parse("job.log", text)], &mut analysis);
            analysis
                .facts
                .iter()
                .filter(|f| f.name == "nccl.socket_iface_suspect")
                .filter_map(|f| f.get("iface").map(str::to_string))
                .collect()
        };
        assert_eq!(suspects(log), ["the peer's Docker network (172.21.0.1)"]);
        assert!(suspects(&log.replace("ens3:172.16.0.16", "eth0:172.21.0.7")).is_empty());
        assert!(suspects(&log.replace("172.21.0.1<", "172.21.4.9<")).is_empty(), "not a gateway");
        assert_eq!(docker_gateway("172.31.0.1"), Some(31));
        assert_eq!(docker_gateway("172.16.0.1"), None);
    }

    /// vllm-project/vllm#6201: NCCL 2.20.5 built for CUDA 11.0 (a cu11 wheel) refuses graph capture
    /// on a driver of CUDA 11.8: the build, not the driver. Without the driver's version the
    /// refusal stays the driver's or the build's, as NCCL words it.
    #[test]
    fn graph_capture_refused_by_an_nccl_built_before_cuda_11_3() {
        let log = "hostname:116024:116024 [0] NCCL INFO cudaDriverVersion 11080\n\
                   NCCL version 2.20.5+cuda11.0\n\
                   hostname:116024:116024 [0] misc/strongstream.cc:53 NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.\n";
        let names = |text: &str| -> Vec<String> {
            let mut analysis = Analysis::default();
            analyze(&[parse("job.log", text)], &mut analysis);
            analysis.facts.iter().map(|f| f.name.clone()).collect()
        };
        let found = names(log);
        assert!(
            found.iter().any(|n| n == "nccl.internal") && !found.iter().any(|n| n == "nccl.cuda_version"),
            "{found:?}"
        );
        let old_driver = log.replace("cudaDriverVersion 11080", "cudaDriverVersion 11020");
        assert!(names(&old_driver).iter().any(|n| n == "nccl.cuda_version"));
        let no_driver: String = log.lines().skip(1).map(|l| format!("{l}\n")).collect();
        assert!(names(&no_driver).iter().any(|n| n == "nccl.cuda_version"));
    }

    /// pytorch/pytorch#131781 (heldout355): a socket connect that failed inside the bootstrap (the
    /// socket layer's trace, then bootstrap.cc's) is the bootstrap's connection; the same socket
    /// trace climbing through the proxy (NVIDIA/nccl#706) is another socket's.
    #[test]
    fn a_socket_failure_under_the_bootstrap_is_its_connection() {
        let calls = |text: &str| -> Vec<String> {
            let mut analysis = Analysis::default();
            analyze(&[parse("job.log", text)], &mut analysis);
            analysis
                .facts
                .iter()
                .filter(|f| f.name == "nccl.bootstrap_failed")
                .filter_map(|f| f.get("call").map(str::to_string))
                .collect()
        };
        let connect = "g105:26921:27058 [0] NCCL INFO misc/socket.cc:505 -> 2 (Operation now in progress)\n\
                       g105:26921:27058 [0] NCCL INFO misc/socket.cc:570 -> 2\n\
                       g105:26921:27058 [0] NCCL INFO bootstrap.cc:275 -> 2\n\
                       g105:26921:27058 [0] NCCL INFO init.cc:1493 -> 2\n";
        assert_eq!(calls(connect), ["connect"]);
        let proxy = "worker-23:83:2526 [0] NCCL INFO misc/socket.cc:520 -> 2\n\
                     worker-23:83:2520 [0] NCCL INFO transport/net.cc:870 -> 2\n\
                     worker-23:83:2520 [0] NCCL INFO proxy.cc:494 -> 2\n";
        assert_eq!(calls(proxy), ["socket"]);
    }

    /// INFO lines and socket failures that decide a diagnosis (corpus cases named).
    #[test]
    fn a_bootstrap_that_fails_over_ipoib_suspects_that_interface() {
        // NVIDIA/nccl#1000 (tests/corpus): NCCL's bootstrap picked the IPoIB interface and its
        // calls failed with system errors (the INFO return-code trace).
        let log = "n3:2331:2666 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB/SHARP; OOB ibp75s0:192.168.0.103<0>\n\
                   n3:2331:2658 [3] NCCL INFO misc/socket.cc:567 -> 2\n\
                   n3:2331:2658 [3] NCCL INFO bootstrap.cc:270 -> 2\n";
        let mut analysis = Analysis::default();
        analyze(&[parse("rank3.log", log)], &mut analysis);
        let suspect = analysis.facts.iter().find(|f| f.name == "nccl.socket_iface_suspect").expect("suspect");
        assert_eq!(suspect.get("iface"), Some("ibp75s0"));
        assert!(analysis.facts.iter().any(|f| f.name == "nccl.bootstrap_failed"));
        // The same trace over Ethernet is a failed bootstrap, not an interface to blame.
        let mut ethernet = Analysis::default();
        analyze(&[parse("rank3.log", &log.replace("ibp75s0", "eth0"))], &mut ethernet);
        assert!(!ethernet.facts.iter().any(|f| f.name == "nccl.socket_iface_suspect"));
        assert_eq!(failed_call("graph/search.cc:1049 -> 0"), None, "0 is success");
        assert_eq!(failed_call("transport/net_ib.cc:1234 -> 6"), Some(("transport/net_ib.cc", 6)));
    }

    #[test]
    fn gdr_on_some_ranks_and_net_plugins_that_differ() {
        // nccl#897: the two sides of one connection, quoted without their prefix: rank 9 sends with
        // GPUDirect RDMA, rank 2 receives without it.
        let found =
            facts("9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n9[1a000] -> 2[6b000] [receive] via NET/IB/1\n");
        let gdr: Vec<&Fact> = found.iter().filter(|f| f.name == "nccl.gdr_disabled").collect();
        assert_eq!(gdr.len(), 1, "{found:?}");
        assert_eq!(gdr[0].get("host"), Some("the host of rank 2"));
        assert!(!found.iter().any(|f| f.name == "nccl.cross_nic"), "an unnumbered channel is not paired: {found:?}");
        let all = facts("n1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\nn2:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IB/0/GDRDMA\n");
        assert!(!all.iter().any(|f| f.name == "nccl.gdr_disabled"), "{all:?}");
        // nccl-tests#36 (heldout73): with GPUDirect RDMA reads off ("read 0") every send is staged
        // and every receive uses it, on both hosts: no host is without it.
        let reads_off = facts("a:1:2 [0] NCCL INFO Ring 00 : 1[18100000] -> 0[435e00000] [receive] via NET/IB/0/GDRDMA\nb:1:2 [0] NCCL INFO Ring 00 : 0[435e00000] -> 1[18100000] [receive] via NET/IB/0/GDRDMA\na:1:2 [0] NCCL INFO Ring 00 : 0[435e00000] -> 1[18100000] [send] via NET/IB/0\n");
        assert!(!reads_off.iter().any(|f| f.name == "nccl.gdr_disabled"), "{reads_off:?}");
        // nccl#1634: one host loads the HPC-X plugin, another NCCL's internal transport.
        let plugins = facts("HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\nHGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n");
        let mismatch = plugins.iter().find(|f| f.name == "nccl.env_mismatch").expect("plugin mismatch");
        assert!(mismatch.get("values").is_some_and(|v| v.contains("HGX-H100-11: internal")), "{mismatch:?}");
        let same = facts("a:1:1 [0] NCCL INFO Plugin Path : /opt/hpcx/x/libnccl-net.so\nb:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8\n");
        assert!(!same.iter().any(|f| f.name == "nccl.env_mismatch"), "one plugin, named two ways: {same:?}");
    }

    /// llm-d#191 (port error, active, error on one port), nccl#653 (NCCL_ALGO leaving no algorithm),
    /// nccl#831 (NCCL_PROTO=LL128 forced with wrong results), nccl#230 (a fatal device event).
    #[test]
    fn port_flaps_forced_algorithms_and_fatal_device_events() {
        let flap = facts(
            "p2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port error\n\
             p2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port active\n\
             p2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async error event: port error\n",
        );
        let fact = flap.iter().find(|f| f.name == "link.flap").expect("flap");
        assert_eq!((fact.get("nic"), fact.get("count"), fact.get("host")), (Some("mlx5_32:1"), Some("2"), Some("p2")));
        let once = facts("p2:311:405 [0] NCCL WARN NET/IB : mlx5_32:1 Got async error event: port error\n");
        assert!(!once.iter().any(|f| f.name == "link.flap"), "one error is a port down, not a flap");

        // NVIDIA/nccl#697's list as its poster wrapped it, cut after NCCL's prefix: the socket
        // transport spreads channels over every listed interface, docker bridges included.
        let wrapped = facts("INFO NET/Socket : Using\n[0]bond0:192.168.1.161<0>\n[1]br-05ab815fa14e:172.19.0.1<0>\n[2]veth6163fba:fe80::b878:6cff:fe52:abe2%veth6163fba<0> \n");
        let suspect = wrapped.iter().find(|f| f.name == "nccl.socket_iface_suspect").expect("suspect interface");
        assert_eq!(suspect.get("iface"), Some("br-05ab815fa14e"));
        let healthy = facts("h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>\nh:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0> br-1:172.17.0.1<0>\n");
        assert!(!healthy.iter().any(|f| f.name == "nccl.socket_iface_suspect"), "{healthy:?}");
        let cut = facts("INFO NET/Socket : Using\nsomething else\n[1]br-05ab815fa14e:172.19.0.1<0>\n");
        assert!(
            !cut.iter().any(|f| f.name == "nccl.socket_iface_suspect"),
            "an entry after another line is not the list's"
        );

        let algo = facts("h:1:1 [1] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available\n");
        assert!(algo.iter().any(|f| f.name == "nccl.no_algorithm"), "{algo:?}");

        let mut analysis = Analysis::default();
        analysis.push(Fact::new("nccltests.out_of_bounds"));
        let log = parse("cmd", "mpirun -np 2 -x NCCL_PROTO=LL128 -x NCCL_IB_DISABLE=1 all_reduce_perf -b 8M\n");
        analyze(&[log], &mut analysis);
        let forced = analysis.facts.iter().find(|f| f.name == "nccl.protocol_forced").expect("forced");
        assert_eq!(forced.get("with"), Some("wrong_results"));

        let fatal = facts(
            "c1:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error\n",
        );
        assert!(fatal.iter().any(|f| f.name == "nic.hw_fault"), "{fatal:?}");
    }

    #[test]
    fn gdr_disabled_remote_exit_refused_connection_and_missing_ib() {
        let has = |facts: &[Fact], name: &str| facts.iter().any(|f| f.name == name);
        // nccl#1676
        let found =
            facts("learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n");
        let gdr = found.iter().find(|f| f.name == "nccl.gdr_disabled").expect("gdr fact");
        assert_eq!(gdr.get("nic"), Some("mlx5_0"));
        // The socket transport says the same of every interface: it never reads GPU memory.
        let socket = facts("h:1:2 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n");
        assert!(!has(&socket, "nccl.gdr_disabled"), "{socket:?}");
        // aws-ofi-nccl#889: the OFI plugin finds GPUDirect RDMA off where the instance type has it.
        let found = facts("ip-10-36-29-253:84:2553 [0] platform_config_endpoint:626 NCCL WARN NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge\n");
        let gdr = found.iter().find(|f| f.name == "nccl.gdr_disabled").expect("OFI gdr fact");
        assert_eq!(
            (gdr.get("host"), gdr.get("nic")),
            (Some("ip-10-36-29-253"), Some("the EFA devices of a p4d.24xlarge"))
        );
        // nccl#795: the peer's process is gone; its host is the one to look at.
        let found = facts("a100-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-23.cluster<47861>\n");
        let closed = found.iter().find(|f| f.name == "nccl.remote_closed").expect("remote closed");
        assert_eq!((closed.get("host"), closed.get("seen_by")), (Some("a100-23.cluster"), Some("a100-22")));
        // ROCm/rccl#1261: the rank's own proxy failed a Connect (internal error, retcode 3) and
        // closed its socket; the "remote peer" on the rank's own host is that proxy, not a rank
        // missing from the job. A failed Close is teardown after another failure, and says nothing.
        let proxy = "node02:10366:10377 [0] proxy.cc:1524 NCCL WARN [Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 3\nnode02:10366:10376 [0] misc/socket.cc:57 NCCL WARN socketProgress: Connection closed by remote peer node02<35187>\n";
        let found = facts(proxy);
        assert!(has(&found, "nccl.internal") && !has(&found, "nccl.remote_closed"), "{found:?}");
        let elsewhere = proxy.replace("remote peer node02<", "remote peer node05<");
        assert!(has(&facts(&elsewhere), "nccl.remote_closed"), "a peer on another host is still one");
        let teardown = proxy.replace("operation Connect", "operation Close");
        assert!(!has(&facts(&teardown), "nccl.internal"));
        // NVIDIA/nccl-tests#15: a connect that timed out, then a close by a peer the line does not
        // name: the close follows the failed connect. A named peer's close is still its own fact.
        let unreachable = "gpu-bql:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out\ngpu-bql:18553:18612 [0] include/socket.h:371 WARN Connection closed by remote peer\n";
        let found = facts(unreachable);
        assert!(has(&found, "nccl.network_unreachable") && !has(&found, "nccl.remote_closed"), "{found:?}");
        let named = unreachable.replace("closed by remote peer\n", "closed by remote peer gpu-other<4242>\n");
        assert!(has(&facts(&named), "nccl.remote_closed"));
        // ml-engineering, SLURM chapter: a refused connection is a network failure, not a hang.
        let found = facts("r11i6n2:486514:486651 [1] include/socket.h:403 NCCL WARN Connect to 10.148.3.247<56821> failed : Connection refused\n");
        assert!(has(&found, "nccl.network_unreachable"));
        // xdit-project/xDiT#111: a connect the local stack aborted.
        let found = facts("h:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.5.0.11<44589> failed : Software caused connection abort\n");
        assert!(has(&found, "nccl.network_unreachable"));
        // A reset connection says nothing about who is at fault (nccl#2076): no accusation.
        let found = facts("n1:1:2 [0] misc/socket.cc:50 NCCL WARN socketProgressOpt: Call to recv from 172.1.1.1<33759> failed : Connection reset by peer\n");
        assert!(!has(&found, "nccl.remote_closed"));
        // pytorch#111424: no IB device although the job asked for it; alone, the line is normal.
        let asked = "node013:37715:38896 [0] NCCL INFO NET/IB : No device found.\nnode013:37715:38896 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n";
        assert!(has(&facts(asked), "rdma.device_missing"));
        assert!(!has(&facts("node013:37715:38896 [0] NCCL INFO NET/IB : No device found.\n"), "rdma.device_missing"));
        // LlamaFactory#8045: the decisive lines are INFO retries, no WARN was pasted.
        let found = facts("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) after sleep for 2600 msec\n");
        assert!(has(&found, "nccl.network_unreachable"));
        // oneflow#3586: channel 00 over NET/Socket/1, a container veth with only a link-local address.
        let found = facts("worker:1:1 [0] NCCL INFO NET/Socket : Using [0]eno1:172.18.40.41<0> [1]veth25f2e72:fe80::380d:bfff:fe5b:54d2%veth25f2e72<0>\nworker:1:2 [0] NCCL INFO Channel 00 : 1[18000] -> 0[18000] [send] via NET/Socket/1\nworker:1:2 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n");
        assert!(found.iter().any(|f| f.name == "nccl.socket_iface_suspect" && f.get("iface") == Some("veth25f2e72")));
        assert!(has(&found, "nccl.socket_connect_failed"));
        // The channel's index is into the last listing, and an entry whose address the poster hid
        // keeps its place in it; an index past the list (or past any list) names nothing.
        let from_channel = |found: &[Fact], iface: &str| {
            found.iter().any(|f| {
                f.name == "nccl.socket_iface_suspect"
                    && f.get("iface") == Some(iface)
                    && f.evidence.iter().any(|e| e.text.contains("via NET/Socket/"))
            })
        };
        let relisted = "w:1:1 [0] NCCL INFO NET/Socket : Using [0]eno1:10.1.0.2<0>\nw:1:1 [0] NCCL INFO NET/Socket : Using [0]eno1.<ip> [1]veth25f2e72.<ip>\nw:1:2 [0] NCCL INFO Channel 00 : 1[0] -> 0[0] [send] via NET/Socket/1\n";
        assert!(from_channel(&facts(relisted), "veth25f2e72"));
        let past = "w:1:1 [0] NCCL INFO NET/Socket : Using [0]eno1:10.1.0.2<0> [1]veth1:10.1.0.3<0>\nw:1:2 [0] NCCL INFO Channel 00 : 1[0] -> 0[0] [send] via NET/Socket/18446744073709551615\n";
        assert!(!from_channel(&facts(past), "veth1"));
        assert!(from_channel(&facts(&past.replace("18446744073709551615", "1")), "veth1"));
        // nccl#941: HPC-X's RDMA plugin loaded, and no IB device: RDMA was expected.
        let found = facts("h:7839:7839 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v5)\nh:7839:7911 [0] NCCL INFO NET/IB : No device found.\n");
        assert!(has(&found, "rdma.device_missing"));
        // awslabs/awsome-distributed-ai#386: aws-ofi-nccl failed to start, and NCCL connects ranks
        // of two hosts over sockets.
        let ofi = "w:954:3133 [6] nccl_net_ofi_create_plugin:1067 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\nw:954:3133 [6] NCCL INFO NET/IB : No device found.\n";
        assert!(has(&facts(ofi), "rdma.device_missing"));
        let channel = "w:944:3818 [0] NCCL INFO Channel 13/0 : 0[0] -> 8[0] [receive] via NET/Socket/0\nw:944:3818 [0] NCCL INFO NET/IB : No device found.\n";
        assert!(has(&facts(channel), "rdma.device_missing"));
        // aws/aws-ofi-nccl#803: in a container without the EFA devices, libfabric's tcp provider.
        assert!(has(
            &facts("c:1287:1328 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)\n"),
            "rdma.device_missing"
        ));
        assert!(!has(
            &facts("c:1287:1328 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"),
            "rdma.device_missing"
        ));
        // hiyouga/LlamaFactory#5018: a container on Docker's default bridge bootstraps on its
        // private 172.17 address, and the socket layer fails.
        let bridge = "c39f5cf046aa:4773:4773 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.3<0>\nc39f5cf046aa:4774:4835 [1] NCCL INFO misc/socket.cc:568 -> 2\n";
        let found = facts(bridge);
        assert!(found.iter().any(|f| f.name == "nccl.socket_iface_suspect" && f.get("iface") == Some("eth0")));
        assert!(has(&found, "nccl.bootstrap_failed"));
        assert!(
            !has(&facts(&bridge.replace("c39f5cf046aa", "gpu-node-01")), "nccl.socket_iface_suspect"),
            "a host's own 172.17 network"
        );
        // Lightning-AI/pytorch-lightning#19544: a container on a network compose made (172.18)
        // bootstraps there and its connect to the peer on the hosts' LAN is aborted.
        let compose = "442a8ba5c0c6:126284:126284 [0] NCCL INFO Bootstrap : Using eth0:172.18.0.2<0>\n442a8ba5c0c6:126284:126391 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.240.2<39817> failed : Software caused connection abort\n442a8ba5c0c6:126284:126391 [0] NCCL INFO misc/socket.cc:565 -> 2\n";
        let found = facts(compose);
        assert!(
            found.iter().any(|f| f.name == "nccl.socket_iface_suspect" && f.get("iface") == Some("eth0")),
            "{found:?}"
        );
        for outside in ["172.16.0.2", "172.32.0.2"] {
            assert!(
                !has(&facts(&compose.replace("172.18.0.2", outside)), "nccl.socket_iface_suspect"),
                "{outside} is in no pool of dockerd's"
            );
        }
        let alone = bridge.lines().next().map(|l| format!("{l}\n")).unwrap_or_default();
        assert!(!has(&facts(&alone), "nccl.socket_iface_suspect"), "a job in one container, nothing failed");
        // nccl#2157
        let found = facts("[2026-05-04 19:55:27] GPU-606:534134:535429 [1] transport/net_ib/p2p_resiliency.cc:325 NCCL WARN NET/IB: ncclIbResiliencyHandleDeviceFailure: Device 0 marked as failed. Initiating recovery? Yes (send comm=0x7f03e8086000, outstandingRecovery=0)\n");
        assert!(has(&found, "nccl.device_failed"), "{found:?}");
    }

    /// Each family of NCCL WARN a rule needs, from lines operators posted (the corpus case named).
    #[test]
    fn warn_families_from_real_lines() {
        let cases = [
            // horovod#3929
            ("smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000", "nccl.duplicate_gpu"),
            // nccl#905
            ("n1:1:2 [0] NCCL WARN NET/IB : Got async event : port error", "nccl.port_error"),
            // nccl#1235
            ("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'", "nccl.gpu_out_of_memory"),
            // vllm#3069
            ("n1:1:2 [0] NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.", "nccl.cuda_version"),
            // nccl#778
            ("n1:1:2 [0] misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported", "nccl.registration_unsupported"),
            ("n1:1:2 [0] misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory", "nccl.memlock"),
            // hhhyunwoo.github.io "infiniband-nccl-issue": NCCL before 2.12, no errno.
            ("ibvwrap.c: 106 NCCL WARN Call to ibv_reg_mr failed", "nccl.memlock"),
            // sail-sg/zero-bubble-pipeline-parallelism#60: the socket transport's receive longer than posted.
            ("h:74737:75914 [1] transport/net_socket.cc:488 NCCL WARN NET/Socket : peer 10.0.5.194<41988> message truncated : receiving 4 bytes instead of 2. If you believe your socket network is in healthy state,           there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks", "nccl.collective_mismatch"),
            // nccl#1176
            ("compute-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4", "nccl.internal"),
            // NVIDIA/nccl#268: NCCL 2.4's socket transport, before its hint, under TensorFlow's
            // collectives (which the poster had bolded).
            ("**hvd1:2918:3333 [0] external/nccl_archive/src/transport/net_socket.cc:200 NCCL WARN NET/Socket : message truncated : receiving 696320 bytes instead of 32768**", "nccl.collective_mismatch"),
            // nccl-tests#188
            ("user:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3", "nccl.env_mismatch"),
            ("user:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 2 != 1", "nccl.internal"),
            // NVIDIA/nccl#331: the root's address is on no subnet of this container's interfaces.
            ("e82c50601d13:213:213 [0] include/socket.h:197 NCCL WARN Net : No interface found in the same subnet as remote address 192.168.0.91<27030>", "nccl.socket_iface_suspect"),
            // NVIDIA/nccl#1020: ranks built rings that do not close (uninitialised PCI speeds).
            ("[7] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start (13 != 15).", "nccl.internal"),
            // azurehpc#327
            ("vm:16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.", "nccl.topology_file"),
            // Azure/msccl#26: an MSCCL algorithm file without the attributes the executor needs.
            ("my-system:52727:52807 [7] include/msccl/msccl_parser.h:70 NCCL WARN Attribute minBytes of node algo not found", "nccl.topology_file"),
            // nccl#976
            ("h1:1:2 [0] transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'", "nccl.nvls_failed"),
            // nccl#296
            ("h1:1:2 [0] init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39.", "nccl.collective_mismatch"),
            ("h1:1:2 [0] NCCL WARN Bootstrap : no socket interface found", "nccl.socket_iface_suspect"),
            // nccl-tests#14: NCCL before 2.6 printed no "NCCL" before WARN
            ("e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]", "rdma.device_missing"),
            ("e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol", "nccl.socket_iface_suspect"),
            // sglang#3820
            ("node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)", "nccl.network_unreachable"),
            // gpt-neox#1147 (NCCL 2.14's socket prefix), and a GID that only RoCE has.
            ("node2:1:2 [0] NCCL WARN Net : Call to recv from 10.0.0.2<56843> failed : Connection refused", "nccl.network_unreachable"),
            ("h:1:2 [0] misc/ibvwrap.cc:291 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_bond_1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:172.168.20.71, remote GID ::ffff:172.16.20.65", "nccl.roce"),
            // NVIDIA/pyxis#60: NCCL 2.8 names the failed call without an errno.
            ("h:1:2 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed", "nccl.memlock"),
            // TensorRT-LLM#4238: a CUDA call NCCL made itself, refused as malformed.
            ("[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'", "nccl.internal"),
            // THUDM/slime#1106: NCCL 2.27.5 built for CUDA 12.9 on a Blackwell (SM120) GPU.
            ("h:1:2 [1] enqueue.cc:42 NCCL WARN Cuda failure 'named symbol not found'", "nccl.internal"),
            // ray#44533: topology detection could not place a NIC (quoted, so no source location).
            ("h:1:2 [0] NCCL WARN Attribute busid of node nic not found", "nccl.internal"),
            // horovod#3871: NCCL 2.9 under WSL2 cannot resolve the GPU's sysfs path.
            ("h:1:2 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:03/../../0000:03:00.0", "nccl.internal"),
            // A topology file NCCL was given that it cannot parse is the file's fault, not NCCL's.
            ("h:1:2 [0] graph/xml.cc:78 NCCL WARN XML Parse : Unexpected EOF", "nccl.topology_file"),
            ("h:1:2 [0] graph/xml.cc:612 NCCL WARN XML Topology has wrong version 0, 1 needed", "nccl.topology_file"),
            // NCCL 2.23+ (graph/topo.cc) says a duplicate GPU in other words.
            ("h:1:2 [0] graph/topo.cc:1 NCCL WARN Multiple ranks detected using the same GPU on this node. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.", "nccl.duplicate_gpu"),
            ("f11n13:3580085:3580108 [0] misc/nvmlwrap.cc:98 NCCL WARN nvmlInit_v2() failed: Driver/library version mismatch", "nccl.cuda_version"),
            // nccl#1716 (heldout206): NCCL 2.31's words for ranks on one GPU or MIG partition.
            ("h:1:2 [0] init.cc:1141 (initTransportsRank) NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.", "nccl.duplicate_gpu"),
            // nccl#2237 (heldout48): the GPU-initiated path's connect refused by DOCA.
            ("worker-0:862519:862553 [0] transport/net_ib/gdaki/gin_host_gdaki.cc:431 (gdakiConnectQp) NCCL WARN DOCA failure 21", "nccl.internal"),
        ];
        for (line, name) in cases {
            let mut analysis = Analysis::default();
            analyze(&[parse("f", line)], &mut analysis);
            assert!(analysis.has(name), "{line}: {:?}", analysis.facts.iter().map(|f| &f.name).collect::<Vec<_>>());
        }
        // A segment missing when a peer attaches (nccl#1589) is not /dev/shm being too small.
        let missing = "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)";
        let mut analysis = Analysis::default();
        analyze(&[parse("f", missing)], &mut analysis);
        assert!(!analysis.has("nccl.shm_failed") && analysis.has("nccl.internal"), "{:?}", analysis.facts);
        // Advice from the graph code is not a failure of it.
        let advice =
            "h:1:2 [0] graph/search.cc:1 NCCL WARN Could not find a path for pattern 4, falling back to simple order";
        let mut analysis = Analysis::default();
        analyze(&[parse("f", advice)], &mut analysis);
        assert!(!analysis.has("nccl.internal"), "{:?}", analysis.facts);
    }

    /// aws-do-eks#54: NCCL's lines pasted without their prefix and level are read as NCCL's, and a
    /// retry towards a link-local address (NCCL 2.19's "connect to %s returned") names the
    /// interface; prose that quotes a few of NCCL's words is not NCCL's output.
    #[test]
    fn connects_refused_on_every_retry_are_an_unreachable_peer() {
        // facebookresearch/fairseq#1096: NCCL 2.4's retries, refused each time.
        let retry =
            "pytorch-fairseq-worker-0:18:64 [2] NCCL INFO Call to connect returned Connection refused, retrying\n";
        let facts = |text: &str| {
            let mut analysis = Analysis::default();
            analyze(&[parse("log", text)], &mut analysis);
            analysis
        };
        assert!(facts(&retry.repeat(3)).has("nccl.network_unreachable"));
        assert!(!facts(retry).has("nccl.network_unreachable"), "one refusal: the listener may not be up yet");
    }

    /// NVIDIA/TensorRT-LLM#9263: both ranks of a communicator start on one GPU, and the paste
    /// holds the Init lines but not NCCL's WARN.
    #[test]
    fn two_ranks_of_a_communicator_on_one_gpu_are_a_duplicate_gpu() {
        let init = |host: &str, pid: u32, rank: u32, bus: &str| {
            format!("{host}:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm 0x7a1{rank} rank {rank} nranks 2 cudaDev 0 nvmlDev 0 busId {bus} commId 0xaa9becea043c4e6c - Init START\n")
        };
        let facts = |text: &str| {
            let mut analysis = Analysis::default();
            analyze(&[parse("log", text)], &mut analysis);
            analysis
        };
        let same = format!("{}{}", init("worker-0", 42, 0, "100000"), init("worker-0", 43, 1, "100000"));
        assert!(facts(&same).has("nccl.duplicate_gpu"));
        let apart = format!("{}{}", init("worker-0", 42, 0, "100000"), init("worker-0", 43, 1, "200000"));
        assert!(!facts(&apart).has("nccl.duplicate_gpu"));
        let hosts = format!("{}{}", init("worker-0", 42, 0, "100000"), init("worker-1", 43, 1, "100000"));
        assert!(!facts(&hosts).has("nccl.duplicate_gpu"), "the same bus on two hosts is two GPUs");
        // pytorch/examples#1279: NCCL before 2.19 names no commId; two processes' ranks of a
        // communicator of one size on one GPU, here at their aborts.
        let aborted = |pid: u32, rank: u32, bus: &str| {
            format!("d-9-11-1:{pid}:{pid} [0] NCCL INFO comm 0x560c6a8a{rank} rank {rank} nranks 2 cudaDev 0 busId {bus} - Abort COMPLETE\n")
        };
        let old = format!("{}{}", aborted(2870757, 0, "86000"), aborted(2870756, 1, "86000"));
        assert!(facts(&old).has("nccl.duplicate_gpu"));
        let apart = format!("{}{}", aborted(2870757, 0, "86000"), aborted(2870756, 1, "87000"));
        assert!(!facts(&apart).has("nccl.duplicate_gpu"));
        // One process's ranks in two communicators of one size on its own GPU are not two processes.
        let one_process = format!("{}{}", aborted(2870757, 0, "86000"), aborted(2870757, 1, "86000"));
        assert!(!facts(&one_process).has("nccl.duplicate_gpu"), "one process, two communicators");
    }

    #[test]
    fn a_communicator_on_one_host_is_a_single_host_job() {
        let init = |host: &str, rank: u32| {
            format!("{host}:1{rank}:2{rank} [{rank}] NCCL INFO comm 0x55 rank {rank} nranks 2 cudaDev {rank} busId 4c000 commId 0x9d - Init COMPLETE\n")
        };
        let facts = |text: &str| {
            let mut analysis = Analysis::default();
            analyze(&[parse("log", text)], &mut analysis);
            analysis
        };
        // mlcommons/training_results_v3.1 Dell XE9640: every rank on one host.
        assert!(facts(&format!("{}{}", init("xe9640", 0), init("xe9640", 1))).has("nccl.single_host"));
        assert!(!facts(&format!("{}{}", init("node1", 0), init("node2", 1))).has("nccl.single_host"));
        assert!(!facts(&init("node1", 0)).has("nccl.single_host"), "one rank of two seen: not known");
        // NCCL 2.19 and later count the nodes itself.
        let counted = "h:1:2 [0] NCCL INFO comm 0xaa rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n";
        assert!(facts(counted).has("nccl.single_host"));
    }

    #[test]
    fn a_queue_pairs_gid_tells_ethernet_from_infiniband() {
        // NCCL 2.21 in a pod (NVIDIA/nccl#1657): GID 0, link-local, its interface id a MAC.
        let roce = "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1040 mtu 5 query_ece={supported=1} GID 0 (80FE/1A8A41FEFF21A75E) fifoRkey=0x15d3b2";
        let gid = queue_pair_gid(roce).expect("decoded");
        assert_eq!(&gid[..2], &[0xfe, 0x80]);
        assert_eq!(&gid[8..], &[0x5e, 0xa7, 0x21, 0xff, 0xfe, 0x41, 0x8a, 0x1a]);
        assert!(ethernet(gid));
        // RoCE v2's IPv4-mapped GID ::ffff:10.0.0.1.
        assert!(ethernet(queue_pair_gid("qpn 7 GID 3 (0/100000AFFFF0000) fifo").expect("decoded")));
        // An InfiniBand GID: fe80 and the port GUID (no FF FE in its middle).
        assert!(!ethernet(queue_pair_gid("qpn 7 GID 0 (80FE/1234AB000390C2B8) fifo").expect("decoded")));
        assert_eq!(queue_pair_gid("GID 0 (not hex/x)"), None);
    }

    /// finetrainers#16: status 12 on a queue pair whose own GID is link-local and made from a MAC
    /// (RoCE GID index 0 or 1); nccl#1814: the same status on the IPv4-mapped RoCE v2 GID, whose
    /// index was right.
    #[test]
    fn a_failed_queue_pairs_own_gid_says_whether_its_index_was_wrong() {
        let link_local = facts("nm04-a800-node083:1235788:1236546 [4] transport/net_ib.cc:1698 NCCL WARN NET/IB : Got completion from peer 10.76.228.50<46608> with status=12 opcode=129 len=47104 vendor err 129 (Recv) localGid fe80::966d:aeff:fec6:c6c2 remoteGidsfe80::966d:aeff:fec6:a34a\n");
        let wrong = link_local.iter().find(|f| f.name == "nccl.gid_index_wrong").expect("wrong index");
        assert_eq!(
            (wrong.get("host"), wrong.get("gid")),
            (Some("nm04-a800-node083"), Some("fe80::966d:aeff:fec6:c6c2"))
        );
        assert!(link_local.iter().any(|f| f.name == "nccl.roce"));
        let routable = facts("hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221\n");
        assert!(routable.iter().any(|f| f.name == "nccl.gid_routable" && f.get("gid") == Some("::ffff:29.87.88.182")));
        assert!(!routable.iter().any(|f| f.name == "nccl.gid_index_wrong"));
        // An InfiniBand GID (fe80:: and a port GUID) says nothing about RoCE; a flush (status 5)
        // on a link-local GID is no verdict on the index.
        let infiniband = facts("h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=129 len=4 vendor err 129 (Recv) localGid fe80::946d:ae03:cd:e72c remoteGids fe80::946d:ae03:cd:e72d\n");
        assert!(!infiniband.iter().any(|f| f.name == "nccl.gid_index_wrong" || f.name == "nccl.roce"));
        let flushed = facts("h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=5 opcode=129 len=4 vendor err 244 (Recv) localGid fe80::966d:aeff:fec6:c6c2 remoteGids fe80::966d:aeff:fec6:a34a\n");
        assert!(!flushed.iter().any(|f| f.name == "nccl.gid_index_wrong"));
        // nccl#2397 (heldout48): the status by name with its number, and vendor_err=, as 2.24+ print them.
        let named = facts("[2026-09-09 10:46:34] ubuntu4:250415:250528 [1] transport/net_ib/p2p.cc:648 NCCL WARN NET/IB: Got completion from peer 10.153.235.11<52743> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) vendor_err=129 localGid ::ffff:1.1.1.4 remoteGids::ffff:1.1.2.2 hca mlx5_0\n");
        let completion = named.iter().find(|f| f.name == "nccl.wc_error").expect("a failed completion");
        assert_eq!((completion.get("status"), completion.get("vendor_err")), (Some("12"), Some("129 (0x81)")));
    }

    /// nccl-tests#293: no channel uses GPUDirect RDMA, and `topo -m` puts the only NIC SYS from the
    /// GPU; without the topology the channels alone are read; with one GDRDMA channel nothing is said.
    #[test]
    fn no_gdr_channel_where_every_nic_is_across_the_sockets() {
        let channels = "test1:3521:3535 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IBext_v8/0\ntest2:3985:3998 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IBext_v8/0\n";
        let far = || {
            Fact::new("topo.gpu_nic_sys").attr("gpu", "GPU0").attr("nic", "mlx5_0").evidence(Evidence::new(
                "topo",
                3,
                "GPU0     X      SYS     SYS",
            ))
        };
        let judged = |text: &str, topology: bool| {
            let mut analysis = Analysis::default();
            if topology {
                analysis.push(far());
            }
            analyze(&[parse("log", text)], &mut analysis);
            analysis.facts.into_iter().filter(|f| f.name == "nccl.gdr_disabled").collect::<Vec<_>>()
        };
        let found = judged(channels, true);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].get("host"), found[0].get("nic")), (Some("test1"), Some("mlx5_0")));
        assert_eq!(found[0].evidence.len(), 2);
        // Without the topology the channels alone still say that no connection uses it.
        let alone = judged(channels, false);
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert_eq!(alone[0].get("nic"), Some("every InfiniBand/RoCE connection in the log"));
        let with_gdr = channels.replacen("NET/IBext_v8/0\n", "NET/IBext_v8/0/GDRDMA\n", 1);
        assert!(judged(&with_gdr, true).is_empty());
        // Mellanox/nv_peer_memory#56: NCCL itself says the NIC is too far, so no topology is needed;
        // beside a GDRDMA channel the line is about a pair NCCL does not use.
        let too_far =
            "m:11717:11986 [2] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 2[2] / HCA 0 (distance 3 >= 2)\n";
        let found = judged(&format!("{too_far}{channels}"), false);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].get("host"), found[0].get("nic")), (Some("m"), Some("HCA 0")));
        assert_eq!(found[0].evidence.len(), 2);
        assert!(judged(&format!("{too_far}{with_gdr}"), false).is_empty());
        // nccl#1151: the distance message alone is NCCL's word that GPUDirect RDMA is off for the
        // pair, unless the log says it is on for another.
        let alone = judged(too_far, false);
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert_eq!(alone[0].evidence.len(), 1);
        let enabled =
            "m:11717:11986 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for GPU 0[0] / HCA 1 (distance 1 <= 2)\n";
        assert!(judged(&format!("{too_far}{enabled}"), false).is_empty(), "GPUDirect RDMA is on for another pair");
        let warned =
            "m:11717:11986 [2] NCCL INFO transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion with error 12\n";
        assert!(judged(&format!("{too_far}{warned}"), false).is_empty(), "a failure is what to read");
    }

    /// nccl#952: HPC-X's IBext plugin loaded, yet channels between hosts run over sockets, and the
    /// paste has no "NET/IB : No device found" line; without the plugin, sockets are a choice.
    #[test]
    fn channels_over_sockets_beside_a_loaded_rdma_plugin_lost_their_devices() {
        let plugin = "n1:924:1152 [5] NCCL INFO P2P plugin IBext\n";
        let socket = "n1:926:1151 [7] NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3\n";
        let found = facts(&format!("{plugin}{socket}"));
        let missing = found.iter().find(|f| f.name == "rdma.device_missing").expect("device missing");
        assert_eq!(missing.get("host"), Some("n1"));
        assert_eq!(missing.evidence[0].line, 2);
        assert!(!facts(socket).iter().any(|f| f.name == "rdma.device_missing"), "no plugin: sockets may be chosen");
        let ib = socket.replace("NET/Socket/3", "NET/IBext/3/GDRDMA");
        assert!(!facts(&format!("{plugin}{ib}")).iter().any(|f| f.name == "rdma.device_missing"));
    }

    /// nccl-tests#15 (NCCL 2.2): a connect that timed out reached nothing, as a refused one reaches
    /// no listener; a connect that failed otherwise says neither.
    #[test]
    fn a_connect_that_timed_out_is_an_unreachable_peer() {
        let timed_out = facts(
            "gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out\n",
        );
        assert!(timed_out.iter().any(|f| f.name == "nccl.socket_connect_failed"));
        assert!(timed_out.iter().any(|f| f.name == "nccl.network_unreachable"));
        let other = facts("h:1:2 [0] include/socket.h:360 WARN Call to connect failed : Bad file descriptor\n");
        assert!(other.iter().any(|f| f.name == "nccl.socket_connect_failed"));
        assert!(!other.iter().any(|f| f.name == "nccl.network_unreachable"));
    }

    #[test]
    fn untagged_lines_and_retries_towards_link_local_addresses() {
        let text = "NET/Socket : Using [0]enp73s0:10.1.216.156<0> [1]pod-id-link0:169.254.170.23<0>\nsocketPollConnect: connect to 169.254.170.23<...> returned Connection refused, retrying (13/34)\n";
        let log = parse("f", text);
        assert_eq!(log.lines.len(), 2, "{:?}", log.lines);
        assert!(log.lines.iter().all(|l| l.level == Level::Info));
        let mut analysis = Analysis::default();
        analyze(&[log], &mut analysis);
        assert!(analysis.has("nccl.socket_connect_failed"), "{:?}", analysis.facts);
        assert!(analysis
            .facts
            .iter()
            .any(|f| f.name == "nccl.socket_iface_suspect" && f.get("iface") == Some("the one with 169.254.170.23")));
        for prose in ["I think the NET/Socket list is wrong", "we retried the connect", "Using NCCL 2.18"] {
            assert!(parse("f", prose).lines.is_empty(), "{prose}");
        }
    }

    /// PyTorch's DistBackendError quotes NCCL's last error on the line after `Last error:`; a
    /// connection to a link-local address names the interface as the suspect (verl#726).
    #[test]
    fn a_quoted_last_error_is_read_as_the_warning() {
        let text = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error\nLast error:\nsocketStartConnect: Connect to 169.254.0.1<40815> failed : Software caused connection abort\n";
        let mut analysis = Analysis::default();
        analyze(&[parse("f", text)], &mut analysis);
        assert!(analysis.has("nccl.socket_connect_failed"));
        assert!(analysis
            .facts
            .iter()
            .any(|f| f.name == "nccl.socket_iface_suspect" && f.get("iface") == Some("the one with 169.254.0.1")));
        // The same paste with a blank line between every two lines (NVIDIA-NeMo/Speech#15019).
        let spaced = "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n\nLast error:\n\nBootstrap : no socket interface found\n\n";
        let log = parse("f", spaced);
        assert_eq!(log.lines.len(), 1, "{:?}", log.lines);
        assert_eq!(log.lines[0].message, "Bootstrap : no socket interface found");
        assert!(parse("f", "Last error:\n\n\nsome later line\n").lines.len() == 1, "blank lines only are skipped");
        assert!(parse("f", "Last error:\nfirst\nsecond\n").lines.len() == 1, "only the line after it");
    }

    /// jax#22747: newer XLA quotes NCCL's last warning as "log entry (may be unrelated) '...'".
    #[test]
    fn xla_quotes_the_last_warning_in_either_form() {
        let long = "INTERNAL: nccl_utils.cc:305: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled system error (run with NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be unrelated) 'socketTryAccept: Accept failed: Bad file descriptor'.";
        assert_eq!(
            quoted_warning(long, false).map(|q| q.0).as_deref(),
            Some("socketTryAccept: Accept failed: Bad file descriptor")
        );
        let short = "failed: internal error. Last NCCL warning(error): 'NET/IB : Got completion with error 12'";
        assert_eq!(quoted_warning(short, false).map(|q| q.0).as_deref(), Some("NET/IB : Got completion with error 12"));
        // AI-Hypercomputer/xpk#492: the terminal wrapped the quote over three lines.
        let wrapped = "NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be unrelated)  'Error \nwhile creating shared memory segment /dev/shm/nccl-TfciGV (size 31850880), error: No space\nleft on device (28)'.\nnext line\n";
        let log = parse("f", wrapped);
        assert_eq!(log.lines.len(), 1, "{:?}", log.lines);
        assert_eq!(
            log.lines[0].message,
            "Error while creating shared memory segment /dev/shm/nccl-TfciGV (size 31850880), error: No space left on device (28)"
        );
        let mut analysis = Analysis::default();
        analyze(&[log], &mut analysis);
        assert!(analysis.has("nccl.shm_failed"));
        let mut analysis = Analysis::default();
        analyze(&[parse("f", long)], &mut analysis);
        assert!(analysis.has("nccl.internal"), "{:?}", analysis.facts);
    }

    #[test]
    fn header_with_launcher_prefix_is_split() {
        let line = parse_line(
            1,
            "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : x",
        );
        let line = line.unwrap_or_else(|| panic!("not parsed"));
        assert_eq!(line.host.as_deref(), Some("so-ucloud-10-10-23-10"));
        assert_eq!(line.pid, Some(1307367));
        assert_eq!(line.dev, Some(0));
        assert_eq!(line.level, Level::Warn);
        assert_eq!(line.message, "NET/IB : x");
    }

    #[test]
    fn rccl_iommu_advice_is_not_an_error() {
        let text = "[2026-08-23 09:56:58] node [0] /app/rccl/build/release/hipify/src/init.cc:213 NCCL WARN Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!\n";
        let mut analysis = Analysis::default();
        analyze(&[parse("f", text)], &mut analysis);
        assert!(analysis.has("nccl.iommu_warning"));
        assert!(!analysis.has("nccl.error"));
    }

    #[test]
    fn numbers_after_keys() {
        let m = "comm 0x55 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 3d000 commId 0x1 - Init COMPLETE";
        assert_eq!(number_after(m, "rank"), Some(3));
        assert_eq!(number_after(m, "nRanks"), Some(16));
        assert_eq!(word_after(m, "busId"), Some("3d000"));
        assert_eq!(number_after("with error 12, opcode 0, len 0, vendor err 129", "error"), Some(12));
        assert_eq!(number_after("with error 12, opcode 0, len 0, vendor err 129", "vendor err"), Some(129));
    }

    #[test]
    fn channel_lines_give_nic_indices() {
        let log = parse("f", "n1:1:2 [7] NCCL INFO Channel 02/0 : 7[7] -> 8[0] [send] via NET/IB/3/GDRDMA\n");
        let channel = net_channel(&log, &log.lines[0]).unwrap_or_else(|| panic!("not parsed"));
        assert_eq!((channel.from, channel.to, channel.send, channel.nic_index), (7, 8, true, 3));
    }

    /// NVIDIA/nccl#367: containers on two hosts both bootstrap on Docker's default-bridge address;
    /// one address on two hosts reaches neither. Two addresses do not.
    #[test]
    fn one_bootstrap_address_on_two_hosts_is_an_interface_suspect() {
        let log = "c6ad:1:1 [0] NCCL INFO Bootstrap : Using [0]eth0:172.17.0.2<0>\n26a4:1:1 [0] NCCL INFO Bootstrap : Using [0]eth0:172.17.0.2<0>\n";
        let suspect = facts(log).into_iter().find(|f| f.name == "nccl.socket_iface_suspect").expect("suspect");
        assert_eq!((suspect.get("iface"), suspect.get("same_address")), (Some("eth0:172.17.0.2"), Some("yes")));
        let apart = log.replacen("172.17.0.2", "10.1.0.5", 1);
        assert!(!facts(&apart).iter().any(|f| f.get("same_address").is_some()));
        // Two IPv6 link-local addresses share their first group, not the address.
        let ipv6 = "a:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::ba59:9f03:fc:765c%ib0<0>\nb:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::ba59:9f03:fc:9999%ib0<0>\n";
        assert!(!facts(ipv6).iter().any(|f| f.get("same_address").is_some()));
    }

    /// elideng-sg/hypercomputer-internode-deepdive lab 6 (heldout22): two GKE hosts without their
    /// GPUDirect-TCPX NICs; the paste keeps one host's lines, NET/IB finding no device, and a
    /// "Trees" line whose rank 0 has two children: another host's chain joined to this one. A
    /// chain inside one host gives each rank one child at most.
    #[test]
    fn a_tree_with_two_children_spans_hosts_hypercomputer_lab6() {
        let log = "gke-a:1596:2150 [0] NCCL INFO NET/IB : No device found.\n\
                   gke-a:1596:2150 [0] NCCL INFO NET/Socket : Using [0]eth0:10.128.0.52<0>\n\
                   gke-a:1596:2150 [0] NCCL INFO Trees [0] 1/8/-1->0->-1 [1] 1/8/-1->0->-1\n";
        let found = facts(log);
        let missing = found.iter().find(|f| f.name == "rdma.device_missing").expect("device missing");
        assert!(missing.get("text").is_some_and(|t| t.contains("trees join rank 0")), "{found:?}");
        let chain = log.replace("1/8/-1->0->-1", "1/-1/-1->0->-1");
        assert!(!facts(&chain).iter().any(|f| f.name == "rdma.device_missing"));
        assert_eq!(tree_with_children_of_other_hosts("[0] -1/-1/-1->7->6 [1] 2/9/-1->1->0"), Some(1));
        assert_eq!(tree_with_children_of_other_hosts("[0] 3/-1/-1->2->1"), None);
    }

    /// hiyouga/LlamaFactory#6111 (heldout290): a log quoted in a comment whose line breaks became
    /// spaces, so one line holds six records; NCCL_IB_HCA lists all eight rails of the node type
    /// and NET/IB finds none: the RDMA devices are missing, not misnamed.
    #[test]
    fn records_joined_on_one_line_are_read_each_llamafactory6111() {
        let log = "[0] NCCL INFO NCCL_IB_DISABLE set by environment to 0. [0] NCCL INFO NCCL_IB_HCA set to mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1 [0] NCCL INFO NET/IB : No device found. [0] NCCL INFO NET/Socket : Using [0]eth0:10.47.14.218<0> [0] NCCL INFO Using network Socket\n";
        let parsed = parse("f", log);
        let messages: Vec<&str> = parsed.lines.iter().map(|l| l.message.as_str()).collect();
        assert_eq!(messages.len(), 5, "{messages:?}");
        assert_eq!(messages[2], "NET/IB : No device found.");
        assert!(parsed.lines.iter().all(|l| l.line == 1));
        let found = facts(log);
        assert!(found.iter().any(|f| f.name == "rdma.device_missing"), "{found:?}");
        assert!(!found.iter().any(|f| f.name == "nccl.ib_hca_matches_nothing"), "{found:?}");
        // One hand-picked device that matches nothing is the setting's fault (NVIDIA/nccl#811).
        let picked = log.replace("mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1", "mlx5_1");
        assert!(facts(&picked).iter().any(|f| f.name == "nccl.ib_hca_matches_nothing"));
        // With its hosts: cut before each record of the same host, source locations included.
        let hosted = "ubun:1:1 [0] NCCL INFO NET/IB : No device found. ubun:2:7 [0] init.cc:573 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000\n";
        let parsed = parse("f", hosted);
        assert_eq!(parsed.lines.len(), 2);
        assert_eq!((parsed.lines[1].level, parsed.lines[1].source.as_deref()), (Level::Warn, Some("init.cc")));
    }

    /// Two ranks' writes interleaved in one file glue a record to the text before it; a host token
    /// that then reads as another host ("cudaDev 0ljm:803564:803604") is no record of its own, so
    /// no host is made up (the raddet healthy two-GPU log).
    #[test]
    fn a_record_glued_to_the_text_before_it_is_not_cut() {
        let line = "ljm:803563:803603 [0] NCCL INFO comm 0x8fe0500 rank 0 nranks 2 cudaDev 0ljm:803564:803604 [1] NCCL INFO Setting affinity";
        assert_eq!(records(line).count(), 1);
        let parsed = parse("f", line);
        assert_eq!(parsed.lines.len(), 1);
        assert_eq!(parsed.lines[0].host.as_deref(), Some("ljm"));
        assert!(names_a_whole_device_set("=mlx5_0,mlx5_1"));
        assert!(!names_a_whole_device_set("mlx5_0,mlx5_2"));
        assert!(!names_a_whole_device_set("^mlx5_0,mlx5_1"));
        assert!(!names_a_whole_device_set("mlx5_0,bnxt_re1"));
        assert!(!names_a_whole_device_set("mlx5_0"));
    }

    /// horovod/horovod#789 (heldout62): containers on two hosts whose socket transport (NCCL before
    /// 2.4, one line an interface) lists loopback beside eth0, so a share of the channels goes to
    /// 127.0.0.1, the connecting host itself. One host's list naming one address twice is no pair.
    #[test]
    fn one_address_in_two_hosts_socket_lists_is_an_interface_suspect_horovod789() {
        let log = "51ca:48:51 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>
                   51ca:48:51 [0] NCCL INFO NET : Using interface eth0:3.5.6.12<0>
                   e53b:24:27 [1] NCCL INFO NET : Using interface lo:127.0.0.1<0>
                   e53b:24:27 [1] NCCL INFO NET : Using interface eth0:3.10.11.7<0>
";
        let found = facts(log);
        let suspect = found.iter().find(|f| f.get("same_address").is_some()).expect("one address on two hosts");
        assert_eq!(suspect.get("iface"), Some("lo:127.0.0.1"), "{found:?}");
        let current = "a:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]lo:127.0.0.1<0>
                       b:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0> [1]lo:127.0.0.1<0>
";
        assert!(facts(current).iter().any(|f| f.get("same_address").is_some()));
        let apart = current.replace("[1]lo:127.0.0.1<0>", "");
        assert!(!facts(&apart).iter().any(|f| f.get("same_address").is_some()));
        let one_host = "a:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
a:2:2 [1] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
";
        assert!(!facts(one_host).iter().any(|f| f.get("same_address").is_some()));
    }

    /// The bigscience all-reduce benchmark on Omni-Path (heldout70): no NET/IB channel is marked
    /// /GDRDMA, and NCCL warned of nothing, so every transfer is staged through host memory; beside
    /// a WARN the failure is what is read, not the slowness.
    #[test]
    fn no_channel_with_gpudirect_rdma_in_a_quiet_log_is_gdr_disabled() {
        let log = "n1:1:2 [0] NCCL INFO Channel 00/02 : 31[cb000] -> 0[7000] [receive] via NET/IB/1\n\
                   n1:1:2 [0] NCCL INFO Channel 00/02 : 0[7000] -> 8[7000] [send] via NET/IB/1\n";
        assert!(facts(log).iter().any(|f| f.name == "nccl.gdr_disabled"));
        let warned = format!("{log}n1:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion with error 12\n");
        assert!(!facts(&warned).iter().any(|f| f.name == "nccl.gdr_disabled"));
        let with_gdr = log.replace("NET/IB/1\n", "NET/IB/1/GDRDMA\n");
        assert!(!facts(&with_gdr).iter().any(|f| f.name == "nccl.gdr_disabled"));
    }

    /// NVIDIA/nccl#811 (heldout71): NCCL_IB_HCA names a device the VM does not have; returnn#1470:
    /// the bootstrap on IPoIB's IPv6 link-local address fails to bind; torchtune#2556: NCCL's own
    /// memory pool refused as not supported.
    #[test]
    fn an_ib_hca_that_matches_nothing_a_link_local_bootstrap_and_an_unsupported_call() {
        let hca = "ZP-GPU-2:1:2 [0] NCCL INFO NCCL_IB_HCA set to mlx5_1\nZP-GPU-2:1:2 [0] NCCL INFO NET/IB : No device found.\n";
        let found = facts(hca);
        let nothing = found.iter().find(|f| f.name == "nccl.ib_hca_matches_nothing").expect("matches nothing");
        assert_eq!(nothing.get("value"), Some("mlx5_1"));
        assert!(!facts("ZP-GPU-2:1:2 [0] NCCL INFO NET/IB : No device found.\n")
            .iter()
            .any(|f| f.name == "nccl.ib_hca_matches_nothing"));
        let bind = "nd20-01:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::ba59:9f03:fc:765c%ib0<0>\nnd20-01:1:1 [0] misc/socket.cc:379 NCCL WARN Call to bind failed : Cannot assign requested address\nnd20-01:1:1 [0] NCCL INFO bootstrap.cc:176 -> 2\n";
        let suspect = facts(bind).into_iter().find(|f| f.name == "nccl.socket_iface_suspect").expect("link-local");
        assert_eq!(suspect.get("iface"), Some("ib0"));
        let routable = bind.replace("fe80::ba59:9f03:fc:765c%ib0", "10.0.0.7");
        assert!(!facts(&routable).iter().any(|f| f.get("used_by") == Some("bootstrap (an IPv6 link-local address)")));
        let pool = "ip-10-0-9-191:1:2 [0] init.cc:416 NCCL WARN Cuda failure 'operation not supported'\n";
        assert!(facts(pool).iter().any(|f| f.name == "nccl.internal"));
    }

    /// open-mmlab/mmdetection#7047 (heldout87): NCCL's listening socket finds its address held by
    /// another process (a run killed before it closed its sockets): the line states its cause and
    /// is left to be quoted, not made an NCCL failure of unknown cause; a bind refused for another
    /// reason stays one.
    #[test]
    fn an_nccl_socket_that_finds_its_address_taken_is_quoted_mmdetection7047() {
        let taken = "gpu2:1653:1695 [0] include/socket.h:347 NCCL WARN Call to bind failed : Address already in use\n";
        assert!(facts(taken).is_empty(), "{:?}", facts(taken));
        let analysis = crate::triage::analyze(&[crate::triage::Input::new("f", taken.as_bytes().to_vec())]);
        let lines = analysis.facts.iter().find(|f| f.name == "input.error_lines").expect("quoted");
        assert!(lines.get("first").is_some_and(|l| l.contains("Address already in use")));
        let other = taken.replace("Address already in use", "Permission denied");
        assert!(facts(&other).iter().any(|f| f.name == "nccl.error"));
    }

    /// sgl-project/sglang#1427 (heldout133): NCCL could not load libibverbs in the image and ran its
    /// socket transport over ib0, an IPoIB interface: the host has InfiniBand that the job could not
    /// use. The same line beside sockets over an Ethernet interface says nothing.
    #[test]
    fn libibverbs_not_loaded_beside_sockets_over_ipoib_is_no_rdma_device_sglang1427() {
        let log = |interface: &str| {
            format!("h:1:1 [0] NCCL INFO Failed to open libibverbs.so[.1]\nh:1:1 [0] NCCL INFO NET/Socket : Using [0]{interface}:10.0.0.1<0>\n")
        };
        let found = facts(&log("ib0"));
        let missing = found.iter().find(|f| f.name == "rdma.device_missing").expect("no RDMA device");
        assert!(missing
            .get("text")
            .is_some_and(|t| t.starts_with("NCCL could not load libibverbs, although") && t.contains("ib0")));
        assert!(facts(&log("eth0")).iter().all(|f| f.name != "rdma.device_missing"));
    }

    /// Project-HAMi/HAMi#1055 (tests/corpus): the CUDA library under NCCL lacks the driver's entry
    /// points (a GPU-sharing layer's libcuda): NCCL cannot run over it.
    #[test]
    fn a_cuda_library_without_the_drivers_entry_points_is_internal() {
        for line in [
            "kebe-gpu-dev-0:11331:11331 [0] misc/cudawrap.cc:162 NCCL WARN Retrieve cuDeviceGet failed with 0 status 1\n",
            "kebe-gpu-dev-0:6317:6317 [1] misc/cudawrap.cc:230 NCCL WARN CUDA some PFN functions not found in the library\n",
        ] {
            assert!(facts(line).iter().any(|f| f.name == "nccl.internal"), "{line}");
        }
        assert!(facts("h:1:1 [0] misc/cudawrap.cc:90 NCCL WARN cuDriverGetVersion failed with 34\n")
            .iter()
            .all(|f| f.name != "nccl.internal"));
    }
}
