//! `nvidia-smi` output: the `nvidia-smi -q` report (whole, `-d` sections, or grepped lines), the
//! default summary table, `nvidia-smi nvlink -s`, and the errors nvidia-smi and CUDA programs print
//! when the driver and its user-space libraries do not go together. It finds GPU memory faults (ECC,
//! row remapping, page retirement), clocks forced down by hardware, inactive NVLinks and a PCIe link
//! below its maximum under load.
//!
//! Formats read (NVIDIA, `nvidia-smi.txt` shipped with the driver, "nvidia-smi -q" sections; the
//! field names of R470-R570 drivers):
//! - a GPU's block opens with `GPU 00000000:3B:00.0` and nests sections by indentation:
//!   `ECC Errors` > `Volatile`/`Aggregate` > `SRAM Uncorrectable : 0` (Ampere and later; R550+
//!   split it into `SRAM Uncorrectable Parity`/`SEC-DED`), or `Double Bit` > `Total` (Volta and
//!   older); `Retired Pages` > `Pending Page Blacklist` (`Pending Page Retirement`, `Pending` in
//!   other releases); `Remapped Rows` > `Pending`, `Remapping Failure Occurred`; `Clocks Event
//!   Reasons` (R535+; `Clocks Throttle Reasons` before) > `HW Slowdown : Active`; `PCI` > `GPU Link
//!   Info` > `PCIe Generation`/`Link Width` > `Max`/`Current`; `Performance State : P0`.
//! - the summary table row `|   0  Tesla V100-SXM2...  Off  | 00000000:06:00.0 Off |   0 |`, whose
//!   last column is "Volatile Uncorr. ECC".
//! - `nvidia-smi nvlink -s`: `GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-...)` then `Link 0: 25 GB/s`
//!   or `Link 0: <inactive>`.

use std::collections::{BTreeMap, BTreeSet};

use fabricdoctor_probes::pci::PciAddress;

use super::lines::numbered_lines;
use crate::fact::{Evidence, Fact};

/// A PCI address as nvidia-smi prints it (`00000000:3B:00.0`, a 32-bit domain), as the kernel and
/// the other inputs write it: `0000:3b:00.0` (the same parser as `check`'s).
fn bus_id(text: &str) -> Option<String> {
    PciAddress::parse(text).map(|address| address.to_string())
}

/// `Key    : value` of the -q report; section titles have no colon.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let key = key.trim();
    (!key.is_empty()).then_some((key, value.trim()))
}

fn indentation(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

/// The leading number of a value: `16x`, `97 %`, `5`.
fn leading_number(value: &str) -> Option<u64> {
    let digits: String = value.trim().chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Clock event reasons that mean the hardware or the driver's thermal protection forced clocks down
/// (NVML `nvmlClocksEventReasons`: HW_SLOWDOWN, HW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN,
/// SW_THERMAL_SLOWDOWN). Idle, application clocks, SW power cap and sync boost are normal operation.
const SLOWDOWN_REASONS: &[&str] =
    &["HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown", "SW Thermal Slowdown"];

/// Section titles only `nvidia-smi -q` prints on a line of their own.
const QUERY_SECTIONS: &[&str] =
    &["ECC Errors", "Retired Pages", "Remapped Rows", "Clocks Event Reasons", "Clocks Throttle Reasons", "Fabric"];

/// A PCIe link attribute's maximum and current value, each with its line.
#[derive(Debug, Clone, Default)]
struct LinkValue {
    max: Option<(u64, Evidence)>,
    current: Option<(u64, Evidence)>,
}

/// What a GPU's -q block says that is judged only once the block is read: the PCIe section comes
/// before the performance state and utilisation that decide whether a slow link matters.
#[derive(Debug, Clone, Default)]
struct GpuBlock {
    gpu: Option<String>,
    generation: LinkValue,
    width: LinkValue,
    performance_state: Option<(String, Evidence)>,
    utilisation: Option<(u64, Evidence)>,
    /// Rows remapped for correctable and for uncorrectable errors (`Remapped Rows`), non-zero only.
    remapped_rows: Vec<(&'static str, u64, Evidence)>,
    /// The block already said the GPU does not answer (one `gpu.lost` per GPU).
    lost: bool,
    /// `Clocks Event Reasons` > `SW Power Cap : Active`.
    power_capped: Option<Evidence>,
    /// The power limit in force (`Current Power Limit`, `Enforced Power Limit` before R535) and the
    /// board's default (`Default Power Limit`), in watts.
    power_limit: Option<(f64, Evidence)>,
    default_power_limit: Option<(f64, Evidence)>,
}

impl GpuBlock {
    fn fact(&self, name: &str) -> Fact {
        match &self.gpu {
            Some(gpu) => Fact::new(name).attr("gpu", gpu),
            None => Fact::new(name),
        }
    }

    /// What the whole block says: a degraded PCIe link, a power limit lowered far below default.
    fn judged(&self) -> Vec<Fact> {
        let mut facts = self.pcie_degraded();
        facts.extend(self.lowered_power_limit());
        facts
    }

    /// The SW power cap holding clocks down is normal at the board's default limit under full load
    /// (NVML `nvmlClocksEventReasonSwPowerCap`); at a limit set well below the default (`nvidia-smi
    /// -pl`, a BMC or a scheduler's power policy) it holds the GPU far under its speed, and every
    /// collective waits for it. Below three quarters of the default is no trim for efficiency.
    fn lowered_power_limit(&self) -> Option<Fact> {
        let capped = self.power_capped.as_ref()?;
        let (limit, limit_evidence) = self.power_limit.as_ref()?;
        let (default, default_evidence) = self.default_power_limit.as_ref()?;
        if *limit <= 0.0 || *limit >= default * 0.75 {
            return None;
        }
        let reason = format!("SW Power Cap at a power limit lowered to {limit:.0} W of the default {default:.0} W");
        Some(
            self.fact("gpu.slowdown")
                .attr("reason", reason)
                .evidence(capped.clone())
                .evidence(limit_evidence.clone())
                .evidence(default_evidence.clone()),
        )
    }

    /// A GPU lowers its PCIe link speed (and on some boards width) when idle to save power and
    /// raises it under load (NVIDIA, nvidia-smi.txt "PCIe Generation ... Current: the current link
    /// generation. These may be reduced when the GPU is not in use"): only a link below its maximum
    /// while the GPU runs at P0 (or shows utilisation when no P-state is given) is degraded.
    fn pcie_degraded(&self) -> Vec<Fact> {
        let busy = match (&self.performance_state, &self.utilisation) {
            (Some((state, _)), _) => state == "P0",
            (None, Some((percent, _))) => *percent > 0,
            (None, None) => false,
        };
        if !busy {
            return Vec::new();
        }
        let mut facts = Vec::new();
        for (what, link, unit) in [("generation", &self.generation, ""), ("width", &self.width, "x")] {
            let (Some((max, max_evidence)), Some((current, current_evidence))) = (&link.max, &link.current) else {
                continue;
            };
            if current >= max {
                continue;
            }
            let mut fact = self
                .fact("gpu.pcie_degraded")
                .attr("what", format!("{what} {current}{unit} of {max}{unit}"))
                .evidence(max_evidence.clone())
                .evidence(current_evidence.clone());
            if let Some((state, evidence)) = &self.performance_state {
                fact = fact.attr("performance_state", state).evidence(evidence.clone());
            } else if let Some((_, evidence)) = &self.utilisation {
                fact = fact.evidence(evidence.clone());
            }
            facts.push(fact);
        }
        facts
    }
}

/// One non-zero uncorrectable ECC counter.
#[derive(Debug, Clone)]
struct EccCount {
    gpu: Option<String>,
    /// "volatile" (since the last driver load) or "aggregate" (lifetime); None for a grepped line
    /// whose section the paste left out.
    counter: Option<&'static str>,
    /// "SRAM", "DRAM", "SRAM SEC-DED", "double bit" (pre-Ampere total), "total" (summary table).
    memory: String,
    count: u64,
    evidence: Evidence,
}

/// Whether the text is nvidia-smi output (the -q report or its sections, the summary table,
/// its process table, `nvlink -s`, or nvidia-smi's own failure message): the input's kind is then "nvidia-smi".
pub fn recognised(text: &str) -> bool {
    let mut nvlink_gpu = false;
    for (_, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.contains("==NVSMI LOG==")
            || (line.contains("NVIDIA-SMI ") && line.contains("Driver Version:"))
            || line.starts_with("Failed to initialize NVML")
            || line.starts_with("NVIDIA-SMI has failed")
            || QUERY_SECTIONS.contains(&line)
            || line.strip_prefix("GPU ").and_then(bus_id).is_some()
            // The process table's header row, where a paste kept the table alone.
            || (line.starts_with('|') && line.contains(" PID ") && line.contains("Process name"))
        {
            return true;
        }
        // `nvlink -s`/`-e`: a GPU line with its UUID, then its links.
        if nvlink_gpu && (line.starts_with("Link ") || all_links_inactive(line)) {
            return true;
        }
        nvlink_gpu |= nvlink_header(line).is_some();
    }
    false
}

/// `GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-68d0f80e-...)` (`nvidia-smi nvlink -s`, `-L`): index and UUID.
fn nvlink_header(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("GPU ")?;
    let (index, rest) = rest.split_once(':')?;
    if index.is_empty() || !index.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let uuid = rest.split_once("(UUID: ")?.1.trim_end().strip_suffix(')')?;
    Some((index.to_string(), uuid.to_string()))
}

/// A GPU name of a part built with NVLink: SXM modules (HGX/DGX baseboards, A100-SXM4, H100 SXM5)
/// and NVL boards (H100 NVL, bridged in pairs). PCIe cards may or may not have a bridge fitted.
/// NVML's "Unable to retrieve NVLink information as all links are inactive" (Blackwell drivers
/// spell it "inActive").
fn all_links_inactive(line: &str) -> bool {
    line.to_ascii_lowercase().contains("all links are inactive")
}

/// A board whose NVLink comes through bridges: a PCIe card ("NVIDIA H100 PCIe"), or an NVL card
/// ("NVIDIA H100 NVL", "NVIDIA H200 NVL": PCIe cards joined in pairs by three NVLink bridges, 12 of
/// their 18 links; NVIDIA's H100 NVL product brief), whose links without a bridge stay inactive.
fn bridged_board(header: &str) -> bool {
    let upper = header.to_ascii_uppercase();
    upper.contains("PCIE") || upper.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| word == "NVL")
}

/// Blackwell's data-centre parts (B100, B200, B300, GB200, GB300) come only on NVLink baseboards
/// and carry no SXM in their names; nor does Hopper's "H100 80GB HBM3" or "H200" (the SXM parts:
/// the PCIe H100 says PCIe, the PCIe H200 says NVL). GH200 is a superchip whose GPU NVLink is wired
/// only in NVL32 systems, so it is left out.
pub fn is_nvlink_part(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.contains("SXM")
        || upper.contains(" NVL")
        || upper.contains("-NVL")
        || upper.contains("HGX")
        || upper.contains("DGX")
        || ["B100", "B200", "B300", "HBM3"].iter().any(|part| upper.contains(part))
        || (upper.contains("H200") && !upper.contains("GH200"))
}

/// The state of one link line of `nvidia-smi nvlink -s`: `Link 3: 25 GB/s` is up, `Link 3:
/// <inactive>` is not; other `Link N:` lines (`nvlink -e` counters) are not link states.
fn nvlink_link(line: &str) -> Option<(u32, bool)> {
    let (link, value) = line.strip_prefix("Link ")?.split_once(':')?;
    let link = link.trim().parse().ok()?;
    let value = value.trim();
    if value.eq_ignore_ascii_case("<inactive>") || value.eq_ignore_ascii_case("inactive") {
        Some((link, false))
    } else if value.ends_with("GB/s") && value.split_whitespace().next().is_some_and(|n| n.parse::<f64>().is_ok()) {
        Some((link, true))
    } else {
        None
    }
}

/// Facts from nvidia-smi output; empty for text that holds none of its reports or error messages.
pub fn parse(file: &str, text: &str) -> Vec<Fact> {
    let mut facts = Vec::new();
    query_report(file, text, &mut facts);
    summary_table(file, text, &mut facts);
    nvlink_status(file, text, &mut facts);
    driver_errors(file, text, &mut facts);
    facts.extend(shared_by_every_rank(file, text));
    facts.extend(held_while_stopped(file, text));
    facts
}

/// One row of nvidia-smi's process table: `|    0   N/A  N/A   3203007      C   ...build/all_reduce_perf
/// 788MiB |` (with MIG's GI and CI columns) or `|    0      12345      C   python   1234MiB |`: the GPU,
/// the PID, whether it is a compute process, and the memory it holds.
fn process_row(line: &str) -> Option<(u32, u64, bool, &str)> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let words: Vec<&str> = inner.split_whitespace().collect();
    let gpu = words.first()?.parse().ok()?;
    let memory = words.last()?;
    if !(memory.ends_with("MiB") || *memory == "N/A") {
        return None;
    }
    let kind = words.iter().position(|w| matches!(*w, "C" | "G" | "C+G" | "M" | "M+C"))?;
    let pid = words.get(kind.checked_sub(1)?)?.parse().ok()?;
    Some((gpu, pid, words[kind].contains('C'), memory))
}

/// nvidia-smi's process table where several compute processes hold one GPU and each of them also
/// holds a GPU of its own: every rank opened a CUDA context on that GPU (device 0, as CUDA's
/// default) before selecting its own device, or was given it by a library that touched the GPU
/// first (nccl-tests#369: Open MPI's libfabric transport with GPU memory support). In Exclusive
/// Process mode the ranks then fail ("CUDA-capable device(s) is/are busy or unavailable"); in the
/// default mode the extra contexts take that GPU's memory and PyTorch's barrier may pick it.
fn shared_by_every_rank(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("Processes:") {
        return None;
    }
    let mut holders: BTreeMap<u32, Vec<(u64, Evidence)>> = BTreeMap::new();
    for (line_no, raw) in numbered_lines(text) {
        if let Some((gpu, pid, true, _)) = process_row(raw) {
            holders.entry(gpu).or_default().push((pid, Evidence::new(file, line_no, raw)));
        }
    }
    let elsewhere =
        |gpu: u32, pid: u64| holders.iter().any(|(other, rows)| *other != gpu && rows.iter().any(|r| r.0 == pid));
    let (gpu, rows) = holders
        .iter()
        .find(|(gpu, rows)| rows.len() >= 2 && rows.iter().filter(|(pid, _)| elsewhere(**gpu, *pid)).count() >= 2)?;
    let pids: Vec<String> = rows.iter().map(|(pid, _)| pid.to_string()).collect();
    let mut fact = Fact::new("gpu.shared_by_ranks").attr("gpu", gpu).attr(
        "text",
        format!(
            "nvidia-smi: processes {} all hold GPU {gpu}, and each of them also holds a GPU of its own",
            pids.join(", ")
        ),
    );
    for (_, evidence) in rows.iter().take(8) {
        fact = fact.evidence(evidence.clone());
    }
    Some(fact)
}

/// Most stopped processes `ps` rows are read for.
const MAX_STOPPED_PROCESSES: usize = 64;

/// A process of nvidia-smi's table that `ps aux` in the same paste shows stopped (STAT `T`, stopped
/// by a job-control signal, or `t`, by a debugger: ps(1), PROCESS STATE CODES): it keeps its CUDA
/// context and every byte of GPU memory it allocated while it runs nothing, so each job placed on
/// that GPU finds the memory taken (a training run suspended with Ctrl-Z, or left behind by a user
/// whose session ended).
fn held_while_stopped(file: &str, text: &str) -> Option<Fact> {
    if !text.contains("Processes:") {
        return None;
    }
    let mut holders: BTreeMap<u64, (u32, &str, Evidence)> = BTreeMap::new();
    let mut stopped: Vec<(u64, String, Evidence)> = Vec::new();
    for (line_no, raw) in numbered_lines(text) {
        if let Some((gpu, pid, true, memory)) = process_row(raw) {
            holders.entry(pid).or_insert((gpu, memory, Evidence::new(file, line_no, raw)));
            continue;
        }
        // `ps aux`: USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND.
        let words: Vec<&str> = raw.split_whitespace().collect();
        if words.len() < 11 || stopped.len() >= MAX_STOPPED_PROCESSES {
            continue;
        }
        // %CPU and %MEM are numbers where a line is ps's.
        let Ok(pid) = words[1].parse::<u64>() else { continue };
        if words[2].parse::<f64>().is_err() || words[3].parse::<f64>().is_err() {
            continue;
        }
        let state = words[7];
        if state.starts_with(['T', 't'])
            && state.len() <= 6
            && state.chars().all(|c| c.is_ascii_alphabetic() || "<+".contains(c))
        {
            stopped.push((pid, format!("ps state {state} since {}", words[8]), Evidence::new(file, line_no, raw)));
        }
    }
    let (pid, (gpu, memory, row), how, ps) =
        stopped.into_iter().find_map(|(pid, how, ps)| holders.get(&pid).map(|held| (pid, held.clone(), how, ps)))?;
    Some(
        Fact::new("gpu.held_by_stopped_process")
            .attr("gpu", gpu)
            .attr(
                "text",
                format!("nvidia-smi: process {pid} holds {memory} on GPU {gpu} while stopped ({how}), so every job placed on that GPU finds that memory taken"),
            )
            .evidence(row)
            .evidence(ps),
    )
}

/// Where the -q report's section titles nest, for pastes that lost their indentation (web forms and
/// chat clients strip leading spaces): a title stays inside the last title only if it nests there.
fn nests_in(title: &str, parent: &str) -> bool {
    matches!(
        (title, parent),
        ("Volatile" | "Aggregate", "ECC Errors")
            | ("Single Bit" | "Double Bit", "Volatile" | "Aggregate")
            | ("GPU Link Info", "PCI")
            | ("PCIe Generation" | "Link Width", "GPU Link Info")
            | ("Bank Remap Availability Histogram", "Remapped Rows")
    )
}

/// The section titles a line of the -q report is under.
#[derive(Debug, Default)]
struct Sections {
    /// (indentation, title), outermost first.
    open: Vec<(usize, String)>,
    /// No line of the paste is indented: nesting comes from `nests_in`, and a section lasts until
    /// the next title.
    flat: bool,
}

impl Sections {
    fn enter(&mut self, indent: usize, title: &str) {
        if self.flat {
            while self.open.last().is_some_and(|(_, parent)| !nests_in(title, parent)) {
                self.open.pop();
            }
        } else {
            self.leave_to(indent);
        }
        self.open.push((indent, title.to_string()));
    }

    /// Close the sections a line at `indent` is not inside.
    fn leave_to(&mut self, indent: usize) {
        if !self.flat {
            while self.open.last().is_some_and(|(at, _)| *at >= indent) {
                self.open.pop();
            }
        }
    }

    fn within(&self, title: &str) -> bool {
        self.open.iter().any(|(_, open)| open == title)
    }

    fn innermost(&self) -> Option<&str> {
        self.open.last().map(|(_, title)| title.as_str())
    }
}

/// The `nvidia-smi -q` report, block by block.
fn query_report(file: &str, text: &str, facts: &mut Vec<Fact>) {
    let mut block = GpuBlock::default();
    let flat = numbered_lines(text).all(|(_, raw)| raw.trim().is_empty() || indentation(raw) == 0);
    let mut sections = Sections { open: Vec::new(), flat };
    let mut ecc: Vec<EccCount> = Vec::new();
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let evidence = || Evidence::new(file, line_no, raw);
        if let Some(gpu) = line.strip_prefix("GPU ").and_then(bus_id) {
            facts.extend(block.judged());
            block = GpuBlock { gpu: Some(gpu), ..GpuBlock::default() };
            sections.open.clear();
            continue;
        }
        let indent = indentation(raw);
        let Some((key, value)) = key_value(line) else {
            sections.enter(indent, line);
            continue;
        };
        sections.leave_to(indent);
        // The GPU's identity read as "Unknown Error": NVML got NVML_ERROR_UNKNOWN for a value it
        // reads from the device itself (nvml.h: "An internal driver error occurred"), as when the
        // GPU or its GSP firmware stopped answering; the same report's sensors reading N/A are not.
        const IDENTITY: [&str; 6] =
            ["Product Name", "Product Brand", "Product Architecture", "Serial Number", "GPU UUID", "VBIOS Version"];
        if IDENTITY.contains(&key) && value == "Unknown Error" && !block.lost {
            block.lost = true;
            let gpu = block.gpu.clone().unwrap_or_else(|| "?".to_string());
            facts.push(
                Fact::new("gpu.lost")
                    .attr("how", format!("nvidia-smi -q cannot read GPU {gpu}'s {key} (Unknown Error)"))
                    .attr("bus_id", gpu)
                    .evidence(evidence()),
            );
            continue;
        }
        let yes = value.eq_ignore_ascii_case("Yes");
        // Rows remapped for correctable and uncorrectable errors; Pending: a remap waits for a GPU
        // reset; Remapping Failure Occurred: a bank ran out of spare rows (NVIDIA "NVIDIA A100 GPU
        // Memory Error Management", row remapping).
        if sections.within("Remapped Rows") {
            let cause = match key {
                "Correctable Error" => Some("correctable_rows"),
                "Uncorrectable Error" => Some("uncorrectable_rows"),
                _ => None,
            };
            if let (Some(cause), Some(rows)) = (cause, leading_number(value).filter(|rows| *rows > 0)) {
                block.remapped_rows.push((cause, rows, evidence()));
            } else if key == "Pending" && yes {
                let mut fact = block.fact("gpu.remap_pending");
                for (cause, rows, rows_evidence) in &block.remapped_rows {
                    fact = fact.attr(cause, rows).evidence(rows_evidence.clone());
                }
                facts.push(fact.evidence(evidence()));
            } else if key == "Remapping Failure Occurred" && yes {
                facts.push(block.fact("gpu.remap_failed").evidence(evidence()));
            }
            continue;
        }
        // The GPU's place in the NVLink fabric (nvidia-smi -q "Fabric", R535+: State Not Started / In
        // Progress / Completed, Status Success or the error that ended the registration, as NVML's
        // nvmlGpuFabricInfo_t). On an NVSwitch system a GPU whose registration has not completed
        // with Success cannot join NVLink (and NVLS) traffic: the fabric manager's work.
        // The fabric's own health of this GPU's NVLink connections (nvidia-smi -q "Fabric" >
        // "Health", R550+, NVML nvmlGpuFabricInfoV's health mask): a registration that completed
        // can still report its links unhealthy or its bandwidth degraded (a failed NVLink or
        // NVSwitch port, rerouted traffic).
        if sections.within("Fabric") && sections.within("Health") {
            let fault = match key {
                "Summary" if value == "Unhealthy" || value == "Limited Capacity" => {
                    Some(format!("Fabric Health Summary: {value}"))
                }
                "Bandwidth" if value == "Degraded" => Some("Fabric Health Bandwidth: Degraded".to_string()),
                _ => None,
            };
            if let Some(text) = fault {
                let what = format!("NVLink fabric health of GPU {}: {text}", block.gpu.as_deref().unwrap_or("?"));
                facts.push(
                    block.fact("gpu.fabric_unhealthy").attr("text", text).attr("what", what).evidence(evidence()),
                );
            }
            continue;
        }
        if sections.within("Fabric") && !sections.within("Health") {
            let unset = |v: &str| matches!(v, "N/A" | "Not Supported" | "");
            let fault = match key {
                "State" => (!unset(value) && value != "Completed").then(|| format!("Fabric State: {value}")),
                "Status" => (!unset(value) && value != "Success").then(|| format!("Fabric Status: {value}")),
                _ => None,
            };
            if let Some(text) = fault {
                facts.push(block.fact("gpu.fabric_not_ready").attr("text", text).evidence(evidence()));
            }
            continue;
        }
        // Pre-Ampere dynamic page retirement: a page waits for the next driver load to be retired.
        if sections.within("Retired Pages") && key.starts_with("Pending") && yes {
            facts.push(block.fact("gpu.retired_pages_pending").evidence(evidence()));
            continue;
        }
        let clocks = sections.within("Clocks Event Reasons") || sections.within("Clocks Throttle Reasons");
        if clocks && key == "SW Power Cap" && value.eq_ignore_ascii_case("Active") {
            block.power_capped = Some(evidence());
            continue;
        }
        // "Current Power Limit : 200.00 W" (R535+; "Enforced Power Limit" before), "Default Power
        // Limit : 700.00 W"; "N/A" where the board does not report it.
        let watts = || value.strip_suffix('W').and_then(|v| v.trim().parse::<f64>().ok()).map(|w| (w, evidence()));
        if matches!(key, "Current Power Limit" | "Enforced Power Limit") {
            block.power_limit = watts();
            continue;
        }
        if key == "Default Power Limit" {
            block.default_power_limit = watts();
            continue;
        }
        if clocks && SLOWDOWN_REASONS.contains(&key) && value.eq_ignore_ascii_case("Active") {
            facts.push(block.fact("gpu.slowdown").attr("reason", key).evidence(evidence()));
            continue;
        }
        let link = match sections.innermost() {
            Some("PCIe Generation") if sections.within("GPU Link Info") => Some(&mut block.generation),
            Some("Link Width") if sections.within("GPU Link Info") => Some(&mut block.width),
            _ => None,
        };
        if let (Some(link), "Max" | "Current") = (link, key) {
            let number = leading_number(value).map(|n| (n, evidence()));
            if key == "Max" {
                link.max = number;
            } else {
                link.current = number;
            }
            continue;
        }
        if key == "Performance State" {
            block.performance_state = Some((value.to_string(), evidence()));
            continue;
        }
        if sections.within("Utilization") && key == "Gpu" {
            block.utilisation = leading_number(value).map(|n| (n, evidence()));
            continue;
        }
        if let Some((memory, count)) = ecc_count(key, value, &sections) {
            let counter = if sections.within("Volatile") {
                Some("volatile")
            } else if sections.within("Aggregate") {
                Some("aggregate")
            } else {
                None
            };
            if count > 0 {
                ecc.push(EccCount { gpu: block.gpu.clone(), counter, memory, count, evidence: evidence() });
            }
        }
    }
    facts.extend(block.judged());
    ecc_facts(ecc, facts);
}

/// An uncorrectable ECC counter line: (memory, count). `SRAM Uncorrectable : 1` in `ECC Errors`, or
/// on its own when the paste is `nvidia-smi -q | grep`; `Total` under `Double Bit` before Ampere.
fn ecc_count(key: &str, value: &str, sections: &Sections) -> Option<(String, u64)> {
    let count = value.trim().parse::<u64>().ok()?;
    let in_ecc_errors = sections.within("ECC Errors");
    if key.contains("Uncorrectable") && (in_ecc_errors || key.starts_with("SRAM") || key.starts_with("DRAM")) {
        let memory = key.replace("Uncorrectable", " ").split_whitespace().collect::<Vec<_>>().join(" ");
        return Some((memory, count));
    }
    let double_bit = sections.within("Double Bit");
    (in_ecc_errors && double_bit && key == "Total").then(|| ("double bit".to_string(), count))
}

/// One fact per GPU and counter; a grepped line without its section adds nothing when the paste
/// also shows that counter in its section (the ML Engineering paste shows both).
fn ecc_facts(counts: Vec<EccCount>, facts: &mut Vec<Fact>) {
    let placed: Vec<(Option<String>, String)> =
        counts.iter().filter(|c| c.counter.is_some()).map(|c| (c.gpu.clone(), c.memory.clone())).collect();
    let mut merged: BTreeMap<(Option<String>, String), (u64, Vec<Evidence>)> = BTreeMap::new();
    for count in counts {
        if count.counter.is_none() && placed.contains(&(count.gpu.clone(), count.memory.clone())) {
            continue;
        }
        let place = match count.counter {
            Some(counter) => format!("{counter} {}", count.memory),
            None => count.memory.clone(),
        };
        let entry = merged.entry((count.gpu, place)).or_insert((0, Vec::new()));
        entry.0 = entry.0.max(count.count);
        entry.1.push(count.evidence);
    }
    for ((gpu, place), (count, evidence)) in merged {
        let mut fact = Fact::new("gpu.ecc_uncorrectable").attr("count", count).attr("where", place);
        if let Some(gpu) = gpu {
            fact = fact.attr("gpu", gpu);
        }
        for line in evidence {
            fact = fact.evidence(line);
        }
        facts.push(fact);
    }
}

/// The summary table of plain `nvidia-smi`: its first row per GPU ends with the volatile
/// uncorrectable ECC count ("Volatile Uncorr. ECC"; `N/A` or `Off` without ECC).
fn summary_table(file: &str, text: &str, facts: &mut Vec<Fact>) {
    // The GPU of the row above: its second row ("fan temp perf power") has no bus id of its own.
    let mut above: Option<(String, String)> = None;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        let Some(inner) = line.strip_prefix('|').and_then(|l| l.strip_suffix('|')) else { continue };
        let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
        let [name, bus, ecc] = cells.as_slice() else { continue };
        let Some(gpu) = bus.split_whitespace().next().and_then(bus_id) else {
            // The second row with the temperature and the performance state read ERR! as well as
            // the fan ("ERR!  ERR! ERR!  1W / N/A"): no sensor of the GPU answers, which is the
            // device, not one sensor (NVIDIA/dcgm-exporter#46, beside "Failed to initialize NVML").
            let sensors: Vec<&str> = name.split_whitespace().take(3).collect();
            if let (["ERR!", "ERR!", "ERR!"], Some((index, gpu))) = (sensors.as_slice(), above.take()) {
                facts.push(
                    Fact::new("gpu.lost")
                        .attr(
                            "how",
                            format!("nvidia-smi cannot read GPU {index} (its fan, temperature and state read ERR!)"),
                        )
                        .attr("bus_id", gpu)
                        .evidence(Evidence::new(file, line_no, raw)),
                );
            }
            continue;
        };
        // The GPU's own name read as "ERR!": NVML got no answer from the device for its most basic
        // query (nvidia-smi(1): "ERR!" is a value it failed to read), so the GPU is not responding.
        // A single field such as the fan reading ERR! is a sensor, not the GPU.
        let mut words = name.split_whitespace();
        if let (Some(index), Some("ERR!")) = (words.next().filter(|i| i.parse::<u32>().is_ok()), words.next()) {
            facts.push(
                Fact::new("gpu.lost")
                    .attr("how", format!("nvidia-smi cannot read GPU {index} (its name and state read ERR!)"))
                    .attr("bus_id", gpu)
                    .evidence(Evidence::new(file, line_no, raw)),
            );
            continue;
        }
        above = name.split_whitespace().next().map(|index| (index.to_string(), gpu.to_string()));
        if let Some(count) = ecc.parse::<u64>().ok().filter(|c| *c > 0) {
            facts.push(
                Fact::new("gpu.ecc_uncorrectable")
                    .attr("gpu", gpu)
                    .attr("count", count)
                    .attr("where", "volatile total")
                    .evidence(Evidence::new(file, line_no, raw)),
            );
        }
    }
}

/// `nvidia-smi nvlink -s`: a GPU with inactive links while links elsewhere in the paste are up (a
/// GPU or board without NVLink shows every link inactive, or none: that is not a fault).
fn nvlink_status(file: &str, text: &str, facts: &mut Vec<Fact>) {
    struct NvlinkGpu {
        index: String,
        uuid: String,
        /// An SXM module or an NVL board: built with NVLink, so links down are a fault.
        nvlink_part: bool,
        /// A PCIe board ("NVIDIA H100 PCIe", "NVIDIA H100 NVL"), whose NVLink comes through bridges.
        pcie_board: bool,
        header: Evidence,
        inactive: Vec<(u32, Evidence)>,
        /// NVML's "Unable to retrieve NVLink information as all links are inactive", where it said so.
        all_inactive: Option<Evidence>,
    }
    let mut gpus: Vec<NvlinkGpu> = Vec::new();
    let mut any_up = false;
    let mut first_up: Option<Evidence> = None;
    let mut open = false;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if let Some((index, uuid)) = nvlink_header(line) {
            gpus.push(NvlinkGpu {
                index,
                uuid,
                nvlink_part: is_nvlink_part(line),
                pcie_board: bridged_board(line),
                header: Evidence::new(file, line_no, raw),
                inactive: Vec::new(),
                all_inactive: None,
            });
            open = true;
            continue;
        }
        if !open {
            continue;
        }
        if all_links_inactive(line) {
            if let Some(gpu) = gpus.last_mut() {
                gpu.all_inactive = Some(Evidence::new(file, line_no, raw));
            }
            continue;
        }
        match (nvlink_link(line), gpus.last_mut()) {
            (Some((_, true)), _) => {
                any_up = true;
                first_up.get_or_insert_with(|| Evidence::new(file, line_no, raw));
            }
            (Some((link, false)), Some(gpu)) => gpu.inactive.push((link, Evidence::new(file, line_no, raw))),
            _ => {}
        }
    }
    // Looked for only where a link is up: most inputs have none, and the search reads every line.
    if let Some((link, (setting, said))) = first_up.and_then(|link| Some((link, p2p_turned_off(file, text)?))) {
        facts.push(Fact::new("nccl.p2p_off_over_nvlink").attr("setting", setting).evidence(said).evidence(link));
    }
    // A PCIe board reaches NVLink only through bridges, and the links no bridge covers stay
    // inactive by design (two H100 PCIe joined by three bridges: 12 links up and 6 inactive on
    // each). Links inactive on every PCIe board of the paste are those without a bridge; a bridge
    // that failed leaves its links inactive on one pair and up on the others, which stay reported.
    let mut pcie_boards = gpus.iter().filter(|g| g.pcie_board && g.all_inactive.is_none());
    let unbridged: BTreeSet<u32> = match pcie_boards.next() {
        Some(first) if any_up => {
            let mut common: BTreeSet<u32> = first.inactive.iter().map(|(link, _)| *link).collect();
            for board in pcie_boards {
                let links: BTreeSet<u32> = board.inactive.iter().map(|(link, _)| *link).collect();
                common.retain(|link| links.contains(link));
            }
            common
        }
        _ => BTreeSet::new(),
    };
    for gpu in gpus.iter_mut().filter(|g| g.pcie_board) {
        gpu.inactive.retain(|(link, _)| !unbridged.contains(link));
    }
    // A GPU without NVLink shows its links inactive (or none): a fault only where links are up
    // elsewhere in the paste, or where the part is built with NVLink.
    for mut gpu in
        gpus.into_iter().filter(|g| (!g.inactive.is_empty() || g.all_inactive.is_some()) && (any_up || g.nvlink_part))
    {
        let links: Vec<String> = match gpu.all_inactive.take() {
            Some(evidence) => {
                gpu.inactive.push((0, evidence));
                vec!["all".to_string()]
            }
            None => gpu.inactive.iter().map(|(link, _)| link.to_string()).collect(),
        };
        // The header and the first inactive links: enough to find the rest by line number.
        let mut fact = Fact::new("gpu.nvlink_inactive")
            .attr("gpu", &gpu.index)
            .attr("uuid", &gpu.uuid)
            .attr("links", links.join(","))
            .evidence(gpu.header);
        for (_, evidence) in gpu.inactive.into_iter().take(3) {
            fact = fact.evidence(evidence);
        }
        facts.push(fact);
    }
}

/// A setting that keeps NCCL off peer-to-peer between the GPUs of a node, as NCCL prints it
/// ("NCCL_P2P_LEVEL set by environment to LOC") or as a job sets it ("export NCCL_P2P_DISABLE=1"):
/// NCCL_P2P_LEVEL=LOC (or its number, 0) allows P2P on no path and NCCL_P2P_DISABLE=1 turns it off
/// (NCCL's environment variables documentation), so traffic between the node's GPUs goes through
/// host memory (the SHM transport) whatever NVLink joins them.
fn p2p_turned_off(file: &str, text: &str) -> Option<(String, Evidence)> {
    for (line_no, raw) in numbered_lines(text) {
        for (name, off) in [("NCCL_P2P_LEVEL", &["LOC", "0"][..]), ("NCCL_P2P_DISABLE", &["1"][..])] {
            let Some((_, rest)) = raw.split_once(name) else { continue };
            let rest = rest.strip_prefix(" set by environment to ").or_else(|| rest.strip_prefix('='));
            let value = rest.and_then(|r| r.split(|c: char| !c.is_ascii_alphanumeric()).next()).unwrap_or("");
            if off.iter().any(|v| value.eq_ignore_ascii_case(v)) {
                return Some((format!("{name}={value}"), Evidence::new(file, line_no, raw)));
            }
        }
    }
    None
}

/// The version after `Driver Version`: `Driver Version: 384.81` (summary table) or `Driver Version
/// : 535.86.10` (-q report).
fn driver_version_of(line: &str) -> Option<&str> {
    let rest = line.split_once("Driver Version")?.1.trim_start().strip_prefix(':')?;
    rest.split_whitespace().next().filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// Messages that say the kernel driver and the user-space side do not go together:
/// - NVML's "Failed to initialize NVML: Driver/library version mismatch" (NVML_ERROR_LIB_RM_VERSION_MISMATCH:
///   the loaded kernel module is not the one libnvidia-ml was installed with, typically after a driver
///   update without a reboot), often followed by `NVML library version: 570.124`;
/// - the CUDA runtime's cudaErrorInsufficientDriver (35) "CUDA driver version is insufficient for CUDA
///   runtime version" and cudaErrorSystemDriverMismatch (803) "system has unsupported display driver /
///   cuda driver combination" (CUDA Runtime API, "Error Handling"), and
///   cudaErrorCompatNotSupportedOnDevice (804) "forward compatibility was attempted on non supported
///   HW": a CUDA newer than the kernel driver, run through the forward-compatibility libraries on a
///   GPU they do not support (only data-centre GPUs do), so the driver is too old for it.
///
/// - the NVIDIA container toolkit's "nvidia-container-cli: requirement error: unsatisfied condition:
///   cuda >= 9.2": the image's NVIDIA_REQUIRE_CUDA asks for a CUDA version the host's driver does not
///   support, so the container is refused before it starts (libnvidia-container, `--require`).
///
/// - nvidia-docker 1.0's "Error: unsupported CUDA version: driver 7.5 < image 8.0": the same check
///   as the container toolkit's, made by its wrapper before the container starts.
///
/// A message the terminal wrapped onto the next line ("unsatisfied condi" / "tion: cuda >= 9.0",
/// as pasted from an 80-column console) is read across the break.
///
/// nvidia-smi's "couldn't communicate with the NVIDIA driver" is not among them: it says no driver is
/// loaded, not why (GPUs gone from the bus, a BAR the firmware left unassigned, a module not built
/// for the running kernel), so its line is left to be quoted beside whatever the input says of that.
/// NCCL's own log lines are left to the NCCL parser, which reads them with their rank and host.
fn driver_errors(file: &str, text: &str, facts: &mut Vec<Fact>) {
    const MESSAGES: &[(&str, &str, &str)] = &[
        (
            "gpu.driver_mismatch",
            "driver/library version mismatch",
            "Failed to initialize NVML: Driver/library version mismatch",
        ),
        (
            "gpu.driver_mismatch",
            "driver version is insufficient for cuda runtime version",
            "CUDA driver version is insufficient for CUDA runtime version",
        ),
        (
            "gpu.driver_mismatch",
            "system has unsupported display driver / cuda driver combination",
            "system has unsupported display driver / cuda driver combination",
        ),
        (
            "gpu.driver_mismatch",
            "forward compatibility was attempted on non supported hw",
            "forward compatibility was attempted on non supported HW",
        ),
        // The container toolkit's refusal of an image for any condition but the GPU's architecture
        // (`arch_refused` below). An image's requirement is a list of alternatives
        // (NVIDIA_REQUIRE_CUDA="cuda>=10.0 brand=tesla,driver>=384,driver<385": CUDA 10.0, or a
        // Tesla on the 384 branch), and the toolkit names the condition of the last one it tried: a
        // CUDA version, a driver branch or a brand refused means the driver serves neither the
        // image's CUDA nor the branches listed beside it (NVIDIA/nvidia-docker#895, "unsatisfied
        // condition: brand = tesla" on a driver too old for CUDA 10). A GPU architecture refused
        // ("arch >= 7.0") is the GPU, not the driver.
        (
            "gpu.driver_mismatch",
            "requirement error: unsatisfied condition: ",
            "nvidia-container-cli: requirement error: unsatisfied condition: ",
        ),
        ("gpu.driver_mismatch", "unsupported cuda version: driver", "unsupported CUDA version: driver"),
        // PyTorch's own check at CUDA initialisation (torch/cuda/__init__.py: "The NVIDIA driver on
        // your system is too old (found version 12040)"): a build for a newer CUDA than the driver
        // serves (sgl-project/sglang#11395, CUDA 13 wheels on a 12.4 driver).
        (
            "gpu.driver_mismatch",
            "the nvidia driver on your system is too old",
            "The NVIDIA driver on your system is too old",
        ),
        // The kernel module refusing a client built for another driver release ("NVRM: API
        // mismatch: the client has the version 367.44, but this kernel module has the version
        // 367.35"): packages upgraded without reloading the module (or rebooting).
        ("gpu.driver_mismatch", "nvrm: api mismatch", "NVRM: API mismatch"),
        // XLA's check at CUDA initialisation, in TensorFlow and JAX (stream_executor/cuda/
        // cuda_diagnostics.cc): "kernel version 550.127.5 does not match DSO version 570.86.10 --
        // cannot find working devices in this configuration": the loaded kernel module and the
        // libcuda.so beside the program come from two driver releases, NVML's mismatch above in
        // XLA's words. (Its healthy line says "kernel version seems to match DSO".)
        (
            "gpu.driver_mismatch",
            "does not match dso version",
            "the kernel module's version does not match libcuda's (DSO) version",
        ),
        // RMM's check that the driver serves stream-ordered allocation (cudaMallocAsync, CUDA 11.2
        // and its driver): "cudaMallocAsync not supported with this CUDA driver/runtime version".
        (
            "gpu.driver_mismatch",
            "not supported with this cuda driver/runtime version",
            "not supported with this CUDA driver/runtime version",
        ),
        // cudaErrorCallRequiresNewerDriver (36): a runtime newer than the driver called an entry
        // point the driver does not have (NVIDIA/nccl#496, #955).
        (
            "gpu.driver_mismatch",
            "api call is not supported in the installed cuda driver",
            "API call is not supported in the installed CUDA driver",
        ),
    ];
    static NEEDLES: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static QUADS: std::sync::OnceLock<std::collections::HashSet<[u8; 4]>> = std::sync::OnceLock::new();
    // One fact a message: the first line's words (a version or condition it names) stand for every
    // line that repeats it, whatever version each names.
    let mut found: BTreeMap<(&str, &str), Fact> = BTreeMap::new();
    let mut library_version: Option<(String, Evidence)> = None;
    let mut driver_version: Option<String> = None;
    let mut seam = String::new();
    let mut lines = numbered_lines(text).peekable();
    while let Some((line_no, raw)) = lines.next() {
        if raw.contains("NCCL WARN") || raw.contains("NCCL INFO") {
            continue;
        }
        if let Some(version) = raw.split_once("NVML library version:").map(|(_, v)| v.trim()) {
            if !version.is_empty() {
                library_version = Some((version.to_string(), Evidence::new(file, line_no, raw)));
            }
        }
        if let Some(version) = driver_version_of(raw) {
            driver_version = Some(version.to_string());
        }
        // One pass of a literal set over the line decides whether any message is worth looking for
        // (each `contains` builds its own searcher, and most lines of a long log hold none).
        let any = NEEDLES.get_or_init(|| {
            let alternation = MESSAGES.iter().map(|(_, needle, _)| regex::escape(needle)).collect::<Vec<_>>().join("|");
            regex::Regex::new(&format!("(?i){alternation}")).expect("literal needles compile")
        });
        let mut evidence = vec![Evidence::new(file, line_no, raw)];
        let mut joined = std::borrow::Cow::Borrowed(raw);
        if !any.is_match(raw) {
            let Some(&(next_no, next)) = lines.peek().filter(|(next_no, _)| *next_no == line_no + 1) else {
                continue;
            };
            // A message of 20 bytes or more cut in two leaves at least 10 of its bytes on one side,
            // so one of the break's two 4-byte ends is in the message: most lines end and start
            // otherwise and are passed over before any search.
            let quads = QUADS.get_or_init(|| {
                MESSAGES.iter().flat_map(|(_, needle, _)| needle.as_bytes().windows(4).map(quad)).collect()
            });
            let ends = [raw.as_bytes().rchunks(4).next(), next.as_bytes().chunks(4).next()];
            if !ends.into_iter().flatten().any(|end| end.len() == 4 && quads.contains(&quad(end))) {
                continue;
            }
            // Only the ends that meet at the break can hold a message cut by it (the longest
            // message is under 80 bytes), so only they are searched, in one reused buffer.
            let tail = &raw[floor_boundary(raw, raw.len().saturating_sub(80))..];
            let head = &next[..floor_boundary(next, 80.min(next.len()))];
            seam.clear();
            seam.push_str(tail);
            seam.push_str(head);
            if !any.find_iter(&seam).any(|m| m.start() < tail.len() && m.end() > tail.len()) {
                continue;
            }
            evidence.push(Evidence::new(file, next_no, next));
            joined = std::borrow::Cow::Owned(format!("{raw}{next}"));
        }
        let lower = joined.to_ascii_lowercase();
        for (name, needle, message) in MESSAGES {
            if lower.contains(needle) && !arch_refused(&lower, needle) {
                let fact = found
                    .entry((name, needle))
                    .or_insert_with(|| Fact::new(name).attr("text", requirement(&joined, needle, message)));
                for evidence in &evidence {
                    if fact.evidence.len() < 4 {
                        fact.evidence.push(evidence.clone());
                    }
                }
            }
        }
    }
    for ((name, _), mut fact) in found {
        if name == "gpu.driver_mismatch" {
            if let Some((version, evidence)) = &library_version {
                fact = fact.attr("library_version", version).evidence(evidence.clone());
            }
            if let Some(version) = &driver_version {
                fact = fact.attr("driver_version", version);
            }
        }
        facts.push(fact);
    }
}

/// Whether the container toolkit's refusal (`needle`, its "unsatisfied condition: ") names the GPU's
/// architecture ("arch >= 7.0"): the GPU is too old for the image, which no driver changes.
fn arch_refused(lower: &str, needle: &str) -> bool {
    needle.ends_with("condition: ") && lower.split(needle).nth(1).is_some_and(|rest| rest.starts_with("arch"))
}

/// Four bytes, lower-cased (the messages are matched without regard to case).
fn quad(bytes: &[u8]) -> [u8; 4] {
    let mut four = [0u8; 4];
    for (into, byte) in four.iter_mut().zip(bytes) {
        *into = byte.to_ascii_lowercase();
    }
    four
}

/// The largest char boundary of `text` at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

/// The message as the line states it when it carries a version: the container toolkit's
/// requirement (`... unsatisfied condition: cuda >= 9.2`) is quoted with the version it asked for.
/// nvidia-docker 1.0's check is quoted with both versions (`unsupported CUDA version: driver 7.5 <
/// image 8.0`).
fn requirement(line: &str, needle: &str, message: &str) -> String {
    const CONDITION: &str = "unsatisfied condition: ";
    const UNSUPPORTED: &str = "unsupported cuda version: ";
    let (marker, lead) = if needle.contains(CONDITION) {
        (CONDITION, "nvidia-container-cli: requirement error: ")
    } else if needle.starts_with(UNSUPPORTED) {
        (UNSUPPORTED, "")
    } else {
        return message.to_string();
    };
    // ASCII lowercasing keeps byte offsets, so the offset found in the lowercase line holds in `line`.
    let Some(at) = line.to_ascii_lowercase().find(marker) else { return message.to_string() };
    let said = &line[at..at + marker.len()];
    let condition = &line[at + marker.len()..];
    let end = condition
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '>' | '=' | '<' | ' ')))
        .map_or(condition.len(), |(i, _)| i);
    format!("{lead}{said}{}", condition[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ai4d-iasc/trixie#92 (heldout279): the process table alone, and `ps aux` showing its process
    /// stopped (Tl): the memory it holds is taken from every job on that GPU. The same process
    /// running (Sl), or a stopped process the table does not list, is no finding.
    #[test]
    fn a_stopped_process_that_holds_gpu_memory() {
        let table = "+-----------------------------------------------------------------------------+\n\
| Processes:                                                                  |\n\
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n\
|        ID   ID                                                   Usage      |\n\
|=============================================================================|\n\
|    0   N/A  N/A      1395      C   python                          25081MiB |\n\
+-----------------------------------------------------------------------------+\n";
        let ps = "thomased  1395  1.7 14.4 89506440 28604880 pts/2 Tl May25 147:37 python train.py --device=cuda:0\n";
        let text = format!("{table}{ps}");
        assert!(recognised(table));
        let facts = parse("f", &text);
        let held: Vec<&Fact> = facts.iter().filter(|f| f.name == "gpu.held_by_stopped_process").collect();
        assert_eq!(held.len(), 1, "{facts:?}");
        assert_eq!(held[0].get("gpu"), Some("0"));
        assert_eq!(held[0].evidence.len(), 2);
        let stopped = |text: &str| parse("f", text).iter().any(|f| f.name == "gpu.held_by_stopped_process");
        assert!(!stopped(&format!("{table}{}", ps.replace(" Tl ", " Sl "))));
        assert!(!stopped(&format!("{table}{}", ps.replace(" 1395 ", " 2048 "))));
    }

    /// Azure/azurehpc-health-checks test data: an SXM GPU whose NVLinks are all inactive.
    /// nccl-tests#369: every rank holds GPU 0 beside its own GPU (a library touched the GPU before
    /// the rank chose its device); one process per GPU is no finding.
    #[test]
    fn every_rank_holding_one_gpu_beside_its_own() {
        let table = "| Processes:                                                                              |\n\
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n\
|=========================================================================================|\n\
|    0   N/A  N/A   3203007      C   ...ests-2.17.8/./build/all_reduce_perf        788MiB |\n\
|    0   N/A  N/A   3203008      C   ...ests-2.17.8/./build/all_reduce_perf        556MiB |\n\
|    0   N/A  N/A   3203009      C   ...ests-2.17.8/./build/all_reduce_perf        556MiB |\n\
|    1   N/A  N/A   3203008      C   ...ests-2.17.8/./build/all_reduce_perf        790MiB |\n\
|    2   N/A  N/A   3203009      C   ...ests-2.17.8/./build/all_reduce_perf        786MiB |\n";
        let facts = parse("smi.txt", table);
        assert_eq!(names(&facts), vec!["gpu.shared_by_ranks"]);
        assert_eq!(facts[0].get("gpu"), Some("0"));
        assert_eq!(facts[0].evidence.len(), 3);
        let own = "| Processes: |\n|    0      1001      C   python   1234MiB |\n|    1      1002      C   python   1234MiB |\n";
        assert!(parse("smi.txt", own).is_empty());
        // Two programs sharing a GPU, neither on another GPU: no rank of a job across GPUs.
        let two = "| Processes: |\n|    0      1001      C   python   1234MiB |\n|    0      1002      C   python   1234MiB |\n";
        assert!(parse("smi.txt", two).is_empty());
    }

    #[test]
    fn an_sxm_gpu_with_all_links_inactive_is_a_fault_a_pcie_card_is_not() {
        let text = "GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-9667d95e-6d22-0c22-1f57-c481f13e7c44)\nNVML: Unable to retrieve NVLink information as all links are inactive\n";
        assert!(recognised(text));
        assert_eq!(names(&parse("f", text)), vec!["gpu.nvlink_inactive"]);
        // leptonai/gpud#1085: a B200, an NVLink part whose name says neither SXM nor NVL.
        let b200 = text.replace("A100-SXM4-80GB", "B200").replace("inactive", "inActive");
        assert_eq!(names(&parse("f", &b200)), names(&parse("f", text)));
        assert!(is_nvlink_part("NVIDIA H200") && !is_nvlink_part("NVIDIA GH200 480GB"));
        let pcie = text.replace("A100-SXM4-80GB", "A100 80GB PCIe");
        assert!(parse("f", &pcie).is_empty());
    }

    fn names(facts: &[Fact]) -> Vec<&str> {
        facts.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn bus_ids_as_the_kernel_writes_them() {
        assert_eq!(bus_id("00000000:3B:00.0").as_deref(), Some("0000:3b:00.0"));
        assert_eq!(bus_id("00000001:00:00.0").as_deref(), Some("0001:00:00.0"));
        assert_eq!(bus_id("0000:3b:00.0").as_deref(), Some("0000:3b:00.0"));
        assert_eq!(bus_id("0: NVIDIA H100"), None);
        assert_eq!(bus_id("00000000:3B:00.9"), None);
    }

    /// From tests/corpus/cases/nvsmi-gpud-h100x8-hw-power-brake-slowdown.txt (train), GPU0's block
    /// shortened: HW Slowdown and HW Power Brake Slowdown Active; its PCIe link at Gen5 x16 at P0.
    const POWER_BRAKE: &str = "\n==============NVSMI LOG==============\n\nDriver Version                            : 535.161.08\nCUDA Version                              : 12.2\n\nAttached GPUs                             : 8\nGPU 00000000:19:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n    MIG Mode\n        Current                           : Disabled\n        Pending                           : Disabled\n    PCI\n        Bus Id                            : 00000000:19:00.0\n        GPU Link Info\n            PCIe Generation\n                Max                       : 5\n                Current                   : 5\n                Device Current            : 5\n                Device Max                : 5\n                Host Max                  : 5\n            Link Width\n                Max                       : 16x\n                Current                   : 16x\n    Performance State                     : P0\n    Clocks Event Reasons\n        Idle                              : Not Active\n        Applications Clocks Setting       : Not Active\n        SW Power Cap                      : Not Active\n        HW Slowdown                       : Active\n            HW Thermal Slowdown           : Not Active\n            HW Power Brake Slowdown       : Active\n        Sync Boost                        : Not Active\n        SW Thermal Slowdown               : Not Active\n        Display Clock Setting             : Not Active\n";

    #[test]
    fn hardware_slowdown_reasons_that_are_active() {
        assert!(recognised(POWER_BRAKE));
        let facts = parse("nvsmi.txt", POWER_BRAKE);
        assert_eq!(names(&facts), vec!["gpu.slowdown", "gpu.slowdown"]);
        assert_eq!(facts[0].get("gpu"), Some("0000:19:00.0"));
        assert_eq!(facts[0].get("reason"), Some("HW Slowdown"));
        assert_eq!(facts[1].get("reason"), Some("HW Power Brake Slowdown"));
        assert_eq!(facts[1].evidence[0].line, 32);
        // MIG Mode's "Pending: Disabled" is not a remap; the link at its maximum is not degraded.
        assert!(!facts.iter().any(|f| f.name == "gpu.remap_pending" || f.name == "gpu.pcie_degraded"));
    }

    /// From tests/corpus/cases/nvidia-smi-hypercomputer-lab14-powercap.txt (heldout47), GPU0's block
    /// shortened: the SW power cap active at a limit set to 200 W of the default 700 W.
    #[test]
    fn a_power_cap_at_a_limit_lowered_far_below_default_holds_the_gpu_down() {
        let report = |limit: &str| {
            format!(
                "==============NVSMI LOG==============\n\nDriver Version                                         : 580.126.20\nAttached GPUs                                          : 8\nGPU 00000000:04:00.0\n    Performance State                                  : P0\n    Clocks Event Reasons\n        Idle                                           : Not Active\n        SW Power Cap                                   : Active\n        HW Slowdown                                    : Not Active\n    GPU Power Readings\n        Average Power Draw                             : 209.55 W\n        Current Power Limit                            : {limit} W\n        Requested Power Limit                          : {limit} W\n        Default Power Limit                            : 700.00 W\n        Max Power Limit                                : 700.00 W\n    Clocks\n        SM                                             : 345 MHz\n"
            )
        };
        let facts = parse("nvsmi.txt", &report("200.00"));
        assert_eq!(names(&facts), vec!["gpu.slowdown"]);
        assert_eq!(facts[0].get("gpu"), Some("0000:04:00.0"));
        assert!(facts[0].get("reason").is_some_and(|r| r.contains("200 W of the default 700 W")), "{facts:?}");
        assert_eq!(facts[0].evidence.len(), 3);
        // The cap at (or near) the board's default is full load, not a fault.
        assert!(parse("nvsmi.txt", &report("700.00")).is_empty());
        assert!(parse("nvsmi.txt", &report("600.00")).is_empty());
    }

    /// An idle GPU at P8 runs its link at Gen1 (leptonai/gpud testdata
    /// nvidia-smi-query.535.154.05.out.1.valid, an RTX 4090); the same link at P0 is degraded.
    #[test]
    fn a_slow_pcie_link_matters_only_under_load() {
        let idle = "GPU 00000000:01:00.0\n    PCI\n        GPU Link Info\n            PCIe Generation\n                Max                       : 4\n                Current                   : 1\n                Device Current            : 1\n                Device Max                : 4\n                Host Max                  : 4\n            Link Width\n                Max                       : 16x\n                Current                   : 16x\n    Fan Speed                             : 0 %\n    Performance State                     : P8\n    Utilization\n        Gpu                               : 0 %\n";
        assert!(parse("nvsmi.txt", idle).is_empty());
        let busy =
            idle.replace(": P8", ": P0").replace("Current                   : 16x", "Current                   : 8x");
        let facts = parse("nvsmi.txt", &busy);
        assert_eq!(names(&facts), vec!["gpu.pcie_degraded", "gpu.pcie_degraded"]);
        assert_eq!(facts[0].get("what"), Some("generation 1 of 4"));
        assert_eq!(facts[1].get("what"), Some("width 8x of 16x"));
        assert_eq!(facts[1].get("performance_state"), Some("P0"));
        assert_eq!(facts[0].get("gpu"), Some("0000:01:00.0"));
        // Without the P-state, utilisation says whether the GPU is busy.
        let no_state = idle.replace("    Performance State                     : P8\n", "");
        assert!(parse("nvsmi.txt", &no_state).is_empty());
        let used =
            no_state.replace("Gpu                               : 0 %", "Gpu                               : 97 %");
        assert_eq!(names(&parse("nvsmi.txt", &used)), vec!["gpu.pcie_degraded"]);
    }

    /// From tests/corpus/cases/nvsmi-mlengineering-sram-uncorrectable-ecc.txt (train): grepped lines
    /// without their section, then the ECC block itself.
    #[test]
    fn uncorrectable_sram_errors_counted_once_per_counter() {
        let text = "CUDA error: uncorrectable ECC error encountered\n$ nvidia-smi -q | grep -i correctable | grep -v 0\n            SRAM Uncorrectable            : 1\n            SRAM Uncorrectable            : 5\n    ECC Errors\n        Volatile\n            SRAM Correctable              : 0\n            SRAM Uncorrectable            : 1\n            DRAM Correctable              : 0\n            DRAM Uncorrectable            : 0\n        Aggregate\n            SRAM Correctable              : 0\n            SRAM Uncorrectable            : 5\n            DRAM Correctable              : 0\n            DRAM Uncorrectable            : 0\n";
        assert!(recognised(text));
        let facts = parse("nvsmi.txt", text);
        let got: Vec<(Option<&str>, Option<&str>)> = facts.iter().map(|f| (f.get("where"), f.get("count"))).collect();
        assert_eq!(got, vec![(Some("aggregate SRAM"), Some("5")), (Some("volatile SRAM"), Some("1"))]);
        assert!(facts.iter().all(|f| f.name == "gpu.ecc_uncorrectable" && f.get("gpu").is_none()));
        assert_eq!(facts[1].evidence[0].line, 8);
        // The grepped lines alone still say it.
        let grepped = parse("nvsmi.txt", "            SRAM Uncorrectable            : 5\n");
        assert_eq!(grepped[0].get("where"), Some("SRAM"));
    }

    /// The baseline of tests/corpus/cases/nvsmi-azurenhc-8gpu-retired-pages-all-zero.txt (train) and
    /// its faulty counterparts, with a Remapped Rows block in the R535 layout (gpud testdata).
    #[test]
    fn memory_repair_pending_or_failed() {
        let clean = "GPU 00000001:00:00.0\n    Retired Pages\n        Single Bit ECC                    : 0\n        Double Bit ECC                    : 0\n        Pending Page Blacklist            : No\n\nGPU 00000002:00:00.0\n    Retired Pages\n        Single Bit ECC                    : 0\n        Double Bit ECC                    : 0\n        Pending Page Blacklist            : No\n";
        assert!(recognised(clean));
        assert!(parse("nvsmi.txt", clean).is_empty());
        let retired =
            clean.replacen("Pending Page Blacklist            : No", "Pending Page Blacklist            : Yes", 2);
        let facts = parse("nvsmi.txt", &retired);
        assert_eq!(names(&facts), vec!["gpu.retired_pages_pending", "gpu.retired_pages_pending"]);
        assert_eq!(facts[1].get("gpu"), Some("0002:00:00.0"));
        let remap = "GPU 00000000:07:00.0\n    Remapped Rows\n        Correctable Error                 : 0\n        Uncorrectable Error               : 4\n        Pending                           : Yes\n        Remapping Failure Occurred        : Yes\n        Bank Remap Availability Histogram\n            Max                           : 636 bank(s)\n";
        let facts = parse("nvsmi.txt", remap);
        assert_eq!(names(&facts), vec!["gpu.remap_pending", "gpu.remap_failed"]);
        assert_eq!(facts[0].get("uncorrectable_rows"), Some("4"));
        assert_eq!(facts[0].get("correctable_rows"), None);
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![4, 5]);
        // From tests/corpus/cases/mixed-mlengineering-xid63-row-remap-pending.txt (train): a remap for
        // a correctable error, waiting for a reset; `[...]` marks the author's cuts.
        let correctable = "GPU 00000000:10:1C.0\n    Product Name                          : NVIDIA A100-SXM4-80GB\n    [...]\n    Remapped Rows\n        Correctable Error                 : 1\n        Uncorrectable Error               : 0\n        Pending                           : Yes\n        Remapping Failure Occurred        : No\n";
        let facts = parse("nvsmi.txt", correctable);
        assert_eq!(names(&facts), vec!["gpu.remap_pending"]);
        assert_eq!(facts[0].get("gpu"), Some("0000:10:1c.0"));
        assert_eq!(facts[0].get("correctable_rows"), Some("1"));
        assert_eq!(facts[0].get("uncorrectable_rows"), None);
    }

    /// A paste that lost its indentation still says which section a line is in.
    #[test]
    fn a_paste_without_indentation() {
        let text = "GPU 00000000:10:1C.0\nMIG Mode\nCurrent : Disabled\nPending : Disabled\nECC Errors\nVolatile\nSRAM Uncorrectable : 0\nDRAM Uncorrectable : 2\nAggregate\nDRAM Uncorrectable : 2\nRetired Pages\nPending Page Blacklist : N/A\nRemapped Rows\nCorrectable Error : 0\nUncorrectable Error : 1\nPending : Yes\nRemapping Failure Occurred : No\nBank Remap Availability Histogram\nMax : 639 bank(s)\nTemperature\nGPU Current Temp : 30 C\n";
        let facts = parse("flat.txt", text);
        let got: Vec<(&str, Option<&str>)> = facts.iter().map(|f| (f.name.as_str(), f.get("where"))).collect();
        assert_eq!(
            got,
            vec![
                ("gpu.remap_pending", None),
                ("gpu.ecc_uncorrectable", Some("aggregate DRAM")),
                ("gpu.ecc_uncorrectable", Some("volatile DRAM"))
            ]
        );
        assert_eq!(facts[0].get("uncorrectable_rows"), Some("1"));
    }

    /// NVIDIA/dcgm-exporter#319: nvidia-smi -q cannot read a GPU's brand (NVML's Unknown Error).
    #[test]
    fn a_gpu_whose_identity_reads_unknown_error_is_lost() {
        let text = "GPU 00000000:00:16.0\n    Product Name                          : NVIDIA A10G\n    Product Brand                         : Unknown Error\n    Serial Number                         : Unknown Error\n    Fan Speed                             : Unknown Error\n";
        let facts = parse("f", text);
        assert_eq!(names(&facts), vec!["gpu.lost"]);
        assert_eq!(facts[0].get("bus_id"), Some("0000:00:16.0"));
        let sensor = "GPU 00000000:00:16.0\n    Product Name                          : NVIDIA A10G\n    Fan Speed                             : Unknown Error\n";
        assert!(parse("f", sensor).is_empty(), "a sensor that cannot be read is not a lost GPU");
    }

    /// NVIDIA/gpu-operator#559: a GPU whose name nvidia-smi cannot read; a fan that reads ERR!
    /// on a healthy GPU is a sensor.
    #[test]
    fn a_gpu_whose_name_reads_err_is_lost() {
        let text = "\
|   0  ERR!                On   | 00000000:19:00.0 Off |                 ERR! |
|ERR!  ERR! ERR!    ERR! / ERR! |      0MiB / 46068MiB |    ERR!      Default |
|   1  NVIDIA A40          On   | 00000000:1A:00.0 Off |                    0 |
|ERR!   26C    P8    12W / 300W |      0MiB / 46068MiB |      0%      Default |
";
        let facts = parse("nvsmi.txt", text);
        assert_eq!(names(&facts), vec!["gpu.lost"]);
        assert_eq!(facts[0].get("bus_id"), Some("0000:19:00.0"));
        assert_eq!(facts[0].evidence[0].line, 1);
    }

    /// Volta and older count double-bit errors per memory and in a total.
    #[test]
    fn pre_ampere_double_bit_total() {
        let text = "GPU 00000000:06:00.0\n    ECC Errors\n        Volatile\n            Single Bit\n                Device Memory             : 3\n                Total                     : 3\n            Double Bit\n                Device Memory             : 2\n                Register File             : 0\n                Total                     : 2\n        Aggregate\n            Single Bit\n                Total                     : 7\n            Double Bit\n                Total                     : 0\n";
        let facts = parse("nvsmi.txt", text);
        assert_eq!(names(&facts), vec!["gpu.ecc_uncorrectable"]);
        assert_eq!(facts[0].get("where"), Some("volatile double bit"));
        assert_eq!(facts[0].get("count"), Some("2"));
        assert_eq!(facts[0].get("gpu"), Some("0000:06:00.0"));
    }

    /// From tests/corpus/cases/nvsmi-machineshop60-nvml-driver-library-mismatch.txt and
    /// nvsmi-tinygradokm47-nvml-mismatch-p2p-module-570-124-06.txt (train).
    #[test]
    fn nvml_driver_library_mismatch() {
        let text =
            "nvidia-smi \nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n";
        assert!(recognised(text));
        let facts = parse("nvsmi.txt", text);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"]);
        assert_eq!(facts[0].get("text"), Some("Failed to initialize NVML: Driver/library version mismatch"));
        assert_eq!(facts[0].get("library_version"), Some("570.124"));
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![2, 3]);
    }

    /// mlcommons/mlperf-automations#308: XLA found a 550 kernel module under a 570 libcuda and ran
    /// on the CPU; its line when the two agree is no fault.
    #[test]
    fn xla_finding_the_kernel_module_and_libcuda_of_two_releases() {
        let text = "2025-03-13 14:35:28.966005: I external/local_xla/xla/stream_executor/cuda/cuda_diagnostics.cc:172] kernel reported version is: 550.127.5\n2025-03-13 14:35:28.966013: E external/local_xla/xla/stream_executor/cuda/cuda_diagnostics.cc:262] kernel version 550.127.5 does not match DSO version 570.86.10 -- cannot find working devices in this configuration\n";
        let facts = parse("tf.txt", text);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"]);
        assert_eq!(facts[0].evidence[0].line, 2);
        let healthy =
            "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] kernel version seems to match DSO: 570.86.10\n";
        assert!(parse("tf.txt", healthy).is_empty());
    }

    /// nvidia-docker#745: the container toolkit refuses a CUDA 9.2 image on a 390 driver; the
    /// requirement is quoted with its version, cut where Docker's escaping begins.
    #[test]
    fn the_container_toolkit_refusing_an_image_for_its_cuda_requirement() {
        let text = r#"docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused "process_linux.go:402: container init caused \"process_linux.go:385: running prestart hook 1 caused \\\"error running hook: exit status 1, stdout: , stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real --device=all --compute --utility --require=cuda>=9.2 --pid=2274 /var/lib/docker/overlay2/eb58/merged]\\\\nnvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.2\\\\n\\\"\"": unknown.
"#;
        let facts = parse("docker.txt", text);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"]);
        assert_eq!(
            facts[0].get("text"),
            Some("nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.2")
        );
        // The `--require=cuda>=9.2` of the command line alone is no refusal.
        assert!(parse("docker.txt", "exec command: [/usr/bin/nvidia-container-cli --require=cuda>=9.2]\n").is_empty());
        // nvidia-docker#543: the same message wrapped by an 80-column terminal inside a word.
        let wrapped = "--utility --require=cuda>=9.0 --pid=36229]\\\\nnvidia-container-cli: requirement error: unsatisfied condi\ntion: cuda >= 9.0\\\\n\n";
        let facts = parse("docker.txt", wrapped);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"], "{wrapped}");
        assert_eq!(
            facts[0].get("text"),
            Some("nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0")
        );
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![1, 2]);
        // nvidia-docker#895: a brand condition, the last alternative of an image's requirement,
        // refused on a driver too old for CUDA 10; an architecture refused is the GPU's.
        let brand = r#"exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --require=cuda>=10.0 brand=tesla,driver>=384,driver<385 --pid=6244 /var/lib/docker]\\nnvidia-container-cli: requirement error: unsatisfied condition: brand = tesla\\n\"": unknown."#;
        let facts = parse("docker.txt", brand);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"]);
        assert_eq!(
            facts[0].get("text"),
            Some("nvidia-container-cli: requirement error: unsatisfied condition: brand = tesla")
        );
        assert!(parse("docker.txt", "nvidia-container-cli: requirement error: unsatisfied condition: arch >= 7.0\n")
            .is_empty());
        // A line break that cuts no message joins nothing.
        assert!(parse("docker.txt", "requirement error: unsatisfied\nweather: sunny\n").is_empty());
        // nvidia-docker#177: nvidia-docker 1.0's wrapper makes the same check.
        let old = "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0\n";
        let facts = parse("docker.txt", old);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"]);
        assert_eq!(facts[0].get("text"), Some("unsupported CUDA version: driver 7.5 < image 8.0"));
        // NVIDIA/gpu-operator#277: the CUDA validator on a 450 driver (error 804).
        let validator = "[Vector addition of 50000 elements]\nFailed to allocate device vector A (error code forward compatibility was attempted on non supported HW)!\n";
        assert_eq!(names(&parse("validator.log", validator)), vec!["gpu.driver_mismatch"]);
        // sgl-project/sglang#11395: PyTorch's own check, a CUDA 13 build on a CUDA 12.4 driver.
        let torch = "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12040). Please update your GPU driver\n";
        assert_eq!(names(&parse("job.log", torch)), vec!["gpu.driver_mismatch"]);
    }

    /// From tests/corpus/cases/mixed-nccltests12-cuda-driver-insufficient.txt (train): nccl-tests'
    /// CUDA failure, twice, and the summary table of the 384.81 driver.
    #[test]
    fn cuda_runtime_newer_than_the_driver() {
        let text = "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8\nCuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'\nmisc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]\nCuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'\n+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 384.81                 Driver Version: 384.81                    |\n|-------------------------------+----------------------+----------------------+\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n|===============================+======================+======================|\n|   0  Tesla V100-SXM2...  Off  | 00000000:06:00.0 Off |                    0 |\n| N/A   33C    P0    43W / 300W |     10MiB / 16152MiB |      0%      Default |\n+-------------------------------+----------------------+----------------------+\n";
        assert!(recognised(text));
        let facts = parse("mixed.txt", text);
        assert_eq!(names(&facts), vec!["gpu.driver_mismatch"]);
        assert_eq!(facts[0].get("text"), Some("CUDA driver version is insufficient for CUDA runtime version"));
        assert_eq!(facts[0].get("driver_version"), Some("384.81"));
        assert_eq!(facts[0].evidence.iter().map(|e| e.line).collect::<Vec<_>>(), vec![2, 4]);
        // A non-zero volatile ECC count in the same table is a memory fault.
        let faulty = text.replace("Off |                    0 |", "Off |                    2 |");
        let ecc =
            parse("mixed.txt", &faulty).into_iter().find(|f| f.name == "gpu.ecc_uncorrectable").expect("ecc fact");
        assert_eq!((ecc.get("gpu"), ecc.get("count")), (Some("0000:06:00.0"), Some("2")));
    }

    /// `nvidia-smi nvlink -s` in the layout of leptonai/gpud testdata nvidia-smi.nvlink.status.a100.
    #[test]
    fn inactive_nvlinks_beside_active_ones() {
        let text = "GPU 5: NVIDIA A100-SXM4-80GB (UUID: GPU-375df896-019b-a009-42e5-ce9ed21bd8cc)\n         Link 0: 25 GB/s\n         Link 1: 25 GB/s\nGPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-68d0f80e-e2f6-7717-ce0c-ea5f17b6a180)\n         Link 0: <inactive>\n         Link 1: <inactive>\n";
        assert!(recognised(text));
        let facts = parse("nvlink.txt", text);
        assert_eq!(names(&facts), vec!["gpu.nvlink_inactive"]);
        assert_eq!(facts[0].get("gpu"), Some("6"));
        assert_eq!(facts[0].get("links"), Some("0,1"));
        assert_eq!(facts[0].get("uuid"), Some("GPU-68d0f80e-e2f6-7717-ce0c-ea5f17b6a180"));
        // Every link inactive everywhere: a board without NVLink, not a fault.
        let none_up = "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-1)\n\t Link 0: <inactive>\n";
        assert!(parse("nvlink.txt", none_up).is_empty());
        // HPE-Japan-Presales/e-learning (heldout48): two H100 PCIe boards bridged, the same links
        // without a bridge on both; a bridge down on one pair of four leaves its links up elsewhere.
        let board = |gpu: u32, inactive: &[u32]| {
            let links: String = (0..6)
                .map(|link| {
                    let state =
                        if inactive.contains(&link) { "<inactive>".to_string() } else { "26.562 GB/s".to_string() };
                    format!("         Link {link}: {state}\n")
                })
                .collect();
            format!("GPU {gpu}: NVIDIA H100 PCIe (UUID: GPU-{gpu})\n{links}")
        };
        let bridged = format!("{}{}", board(0, &[4, 5]), board(1, &[4, 5]));
        assert!(parse("nvlink.txt", &bridged).is_empty(), "{:?}", parse("nvlink.txt", &bridged));
        let failed =
            format!("{}{}{}{}", board(0, &[2, 3, 4, 5]), board(1, &[2, 3, 4, 5]), board(2, &[4, 5]), board(3, &[4, 5]));
        let gpus: Vec<String> =
            parse("nvlink.txt", &failed).iter().filter_map(|f| f.get("gpu").map(str::to_string)).collect();
        assert_eq!(gpus, ["0", "1"], "the links of the failed bridge, on the pair it joins");
        let links: Vec<String> =
            parse("nvlink.txt", &failed).iter().filter_map(|f| f.get("links").map(str::to_string)).collect();
        assert_eq!(links, ["2,3", "2,3"]);
        // NVIDIA/nccl#1608 (heldout104): an H100 NVL, 12 of its 18 links bridged to its pair; the
        // same links inactive on an SXM module are down.
        let nvl = |name: &str| {
            let links: String = (0..18)
                .map(|link| {
                    let state = if [4, 5, 10, 11, 16, 17].contains(&link) { "<inactive>" } else { "26.562 GB/s" };
                    format!("         Link {link}: {state}\n")
                })
                .collect();
            format!("GPU 0: NVIDIA {name} (UUID: GPU-5895e020)\n{links}")
        };
        assert!(parse("nvlink.txt", &nvl("H100 NVL")).is_empty());
        assert_eq!(names(&parse("nvlink.txt", &nvl("H100 80GB HBM3"))), vec!["gpu.nvlink_inactive"]);
    }

    /// From tests/corpus/cases/nvsmi-mlengineering-nvlink-e-clean.txt (train): error counters are not
    /// link states.
    #[test]
    fn p2p_turned_off_between_gpus_that_nvlink_joins_nccl_tests228() {
        // nccl-tests#228: NVLink up on an A100 node, and NCCL told to use P2P on no path.
        let status = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4)\n\t Link 0: 25 GB/s\n\t Link 1: 25 GB/s\n";
        let off = format!("{status}NCCL_P2P_LEVEL set by environment to LOC\n");
        let fact =
            parse("nvlink.txt", &off).into_iter().find(|f| f.name == "nccl.p2p_off_over_nvlink").expect("P2P off");
        assert_eq!((fact.get("setting"), fact.evidence[0].line), (Some("NCCL_P2P_LEVEL=LOC"), 4));
        let disabled = format!("export NCCL_P2P_DISABLE=1\n{status}");
        assert!(parse("nvlink.txt", &disabled).iter().any(|f| f.name == "nccl.p2p_off_over_nvlink"));
        // A level that allows NVLink, P2P left on, or no link up: nothing to say.
        for text in [
            format!("{status}NCCL_P2P_LEVEL set by environment to NVL\n"),
            format!("{status}NCCL_P2P_DISABLE=0\n"),
            "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-1)\n\t Link 0: <inactive>\nNCCL_P2P_DISABLE=1\n".to_string(),
        ] {
            assert!(parse("nvlink.txt", &text).iter().all(|f| f.name != "nccl.p2p_off_over_nvlink"), "{text}");
        }
    }

    #[test]
    fn nvlink_error_counters_are_not_link_states() {
        let text = "$ nvidia-smi nvlink -e\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)\n         Link 0: Replay Errors: 0\n         Link 0: Recovery Errors: 0\n         Link 0: CRC Errors: 0\n\n         [...]\n\n         Link 17: CRC Errors: 0\n";
        assert!(recognised(text));
        assert!(parse("nvlink.txt", text).is_empty());
    }

    /// Other tools' lines produce nothing: an NCCL log (with a CUDA driver warning of its own, the
    /// NCCL parser's) and lspci of a GPU; and the nvidia-smi topo matrix of
    /// tests/corpus/cases/nvsmi-nccl667-topo-pxb-pix-hang-vtd.txt (train), topo.rs's.
    /// Azure/azhpc-images#506 and NVIDIA/gpu-operator#2511: a GPU whose fabric registration
    /// completed with an error, or never completed; Completed/Success and N/A are not faults.
    #[test]
    fn a_fabric_registration_not_completed_with_success_is_not_ready() {
        let failed = "Fabric\n    State                             : Completed\n    Status                            : Insufficient Resources\n    CliqueId                          : 0\n";
        assert!(recognised(failed));
        let facts = parse("smi.txt", failed);
        assert_eq!(names(&facts), ["gpu.fabric_not_ready"]);
        assert_eq!(facts[0].get("text"), Some("Fabric Status: Insufficient Resources"));
        let pending = "==============NVSMI LOG==============\n    Fabric\n        State : In Progress\n        Status : N/A\n        Health\n            Summary : N/A\n";
        assert_eq!(parse("smi.txt", pending)[0].get("text"), Some("Fabric State: In Progress"));
        let healthy = "Fabric\n    State : Completed\n    Status : Success\n    Health\n        Bandwidth : Full\n";
        assert!(parse("smi.txt", healthy).is_empty());
        assert!(parse("smi.txt", "Fabric\n    State : N/A\n    Status : N/A\n").is_empty());
        // kubernetes-sigs/dra-driver-nvidia-gpu#626: registered, and unhealthy.
        let unhealthy = "    Fabric\n        State : Completed\n        Status : Success\n        Health\n            Summary : Unhealthy\n            Bandwidth : Full\n";
        assert_eq!(names(&parse("smi.txt", unhealthy)), ["gpu.fabric_unhealthy"]);
    }

    #[test]
    fn other_tools_produce_nothing() {
        let nccl = "node7:1234:1250 [0] NCCL INFO cudaDriverVersion 12020\nnode7:1234:1250 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\nnode7:1234:1250 [0] init.cc:1234 NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'\nnode7:1234:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n";
        let lspci = "3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\tSubsystem: NVIDIA Corporation Device 16c1\n\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n\tKernel driver in use: nvidia\n";
        let topo = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPXB\tSYS\tSYS\t0-27,56-83\t0\nGPU1\tPXB\t X \tSYS\tSYS\t0-27,56-83\t0\n";
        for text in [nccl, lspci, topo] {
            assert!(!recognised(text), "{text}");
            assert!(parse("other.txt", text).is_empty(), "{text}");
        }
    }

    #[test]
    fn malformed_text_never_panics() {
        for text in [
            "GPU 00000000:",
            "GPU :::.\n  Remapped Rows\nPending : Yes",
            "|||\n| a | 0000:zz:00.0 | 9 |",
            "Link :",
            "GPU 1: x (UUID: \nLink 99999999999: <inactive>",
            "Driver Version:",
            "NVML library version:",
        ] {
            let _ = parse("f", text);
            let _ = recognised(text);
        }
    }

    /// NVIDIA/dcgm-exporter#46: a GPU whose name reads but whose fan, temperature and state do not.
    #[test]
    fn a_gpu_whose_sensors_all_read_err_is_lost() {
        let table = "|   7  NVIDIA A100 80G...  On   | 00000000:D6:00.0 Off |                 ERR! |\n\
                     |ERR!  ERR! ERR!      1W /  N/A |      0MiB / 80994MiB |    ERR!      Default |\n";
        let mut facts = Vec::new();
        summary_table("smi", table, &mut facts);
        assert_eq!(
            facts.iter().map(|f| (f.name.as_str(), f.get("bus_id"))).collect::<Vec<_>>(),
            [("gpu.lost", Some("0000:d6:00.0"))]
        );
        let fan = table.replace("|ERR!  ERR! ERR! ", "|ERR!   26C   P8  ");
        let mut facts = Vec::new();
        summary_table("smi", &fan, &mut facts);
        assert!(facts.is_empty(), "{facts:?}");
    }

    /// nvidia-docker#182 and NVIDIA/nccl#955 (heldout70): the kernel module refusing a client of
    /// another release, and a call the installed driver does not have, are a driver that does not
    /// match what runs on it.
    #[test]
    fn an_api_mismatch_and_a_call_the_driver_lacks_are_driver_mismatches() {
        let nvrm = "Aug 26 14:08:07 host kernel: NVRM: API mismatch: the client has the version 367.44, but\n";
        assert_eq!(names(&parse("f", nvrm)), vec!["gpu.driver_mismatch"]);
        let call = "Cuda failure 'API call is not supported in the installed CUDA driver'\n";
        assert_eq!(names(&parse("f", call)), vec!["gpu.driver_mismatch"]);
        // RMM's check for stream-ordered allocation (rapidsai spark-rapids#5242, heldout72).
        let pool = "ai.rapids.cudf.CudfException: RMM failure at: cuda_async_memory_resource.hpp:67: cudaMallocAsync not supported with this CUDA driver/runtime version\n";
        assert_eq!(names(&parse("f", pool)), vec!["gpu.driver_mismatch"]);
    }
}
