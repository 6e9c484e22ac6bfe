//! A perftest bandwidth table read against the port rate the same input shows.
//!
//! perftest's `ib_write_bw`/`ib_read_bw`/`ib_send_bw` print one row per message size under a header
//! `#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]` (`[Gb/sec]` with
//! `--report_gbits`; perftest_parameters.c, `RESULT_FMT`/`RESULT_FMT_G`). The port's rate is
//! `ibstat`'s `Rate: 400` (Gb/s) or `ibv_devinfo -v`'s `active_width: 2X (16)` times its per-lane
//! `active_speed: 100.0 Gbps (128)`. An average far below the rate at the largest size says that
//! something other than the link limits the transfer (the PCIe slot, the firmware state, the peer,
//! the path): a warning that names the figures, not a diagnosis.

use fabricdoctor_checks::{Finding, Verdict};

use super::counters::cite;
use super::lines::numbered_lines;
use crate::fact::Evidence;

/// Below this share of the port's rate, the figure is not the link's. perftest reaches 90 % and
/// more of the line rate on a healthy port at 64 KiB and above.
const FAR_BELOW: f64 = 0.25;

/// The bandwidth table's average at its largest message size: (bytes, Gb/s, the row).
fn largest_average(file: &str, text: &str) -> Option<(u64, f64, Evidence)> {
    let mut column: Option<(usize, f64)> = None;
    let mut best: Option<(u64, f64, Evidence)> = None;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        if line.starts_with("#bytes") {
            // The header's words, with "BW average[Gb/sec]" as two whitespace-separated words.
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| w.starts_with("average["));
            column = at.map(|at| {
                // "BW peak[..]" and "BW average[..]" are two words each: the value columns are
                // "#bytes #iterations peak average ...", so the average's column is the count of
                // header words before it that are not "BW".
                let index = words[..at].iter().filter(|w| **w != "BW").count();
                let to_gigabits = if words[at].contains("Gb/sec") { 1.0 } else { 8.0 * 1_048_576.0 / 1e9 };
                (index, to_gigabits)
            });
            continue;
        }
        let Some((index, to_gigabits)) = column else { continue };
        let cells: Vec<&str> = line.split_whitespace().collect();
        let (Some(bytes), Some(average)) =
            (cells.first().and_then(|c| c.parse::<u64>().ok()), cells.get(index).and_then(|c| c.parse::<f64>().ok()))
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(size, _, _)| bytes >= *size) {
            best = Some((bytes, average * to_gigabits, Evidence::new(file, line_no, raw)));
        }
    }
    best
}

/// The rates (Gb/s) of the active ports the input shows, with the line that gives each.
fn port_rates(file: &str, text: &str) -> Vec<(f64, Evidence)> {
    let mut rates = Vec::new();
    let mut width: Option<f64> = None;
    for (line_no, raw) in numbered_lines(text) {
        let line = raw.trim();
        let number = |value: &str| value.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
        if let Some(value) = line.strip_prefix("Rate:") {
            if let Some(rate) = number(value) {
                rates.push((rate, Evidence::new(file, line_no, raw)));
            }
        } else if let Some(value) = line.strip_prefix("active_width:") {
            width = value.split_whitespace().next().and_then(|w| w.strip_suffix('X')).and_then(|w| w.parse().ok());
        } else if let Some(value) = line.strip_prefix("active_speed:") {
            if let (Some(lanes), Some(speed)) = (width.take(), number(value)) {
                rates.push((lanes * speed, Evidence::new(file, line_no, raw)));
            }
        }
        if rates.len() >= 64 {
            break;
        }
    }
    rates
}

/// A warning where the input's perftest average at its largest size is far below the one port rate
/// it shows; nothing where it shows no table, no rate, or ports of different rates (which port the
/// test ran on is then not known).
pub fn below_port_rate(file: &str, text: &str) -> Option<Finding> {
    if !text.contains("#bytes") {
        return None;
    }
    let (bytes, average, row) = largest_average(file, text)?;
    let rates = port_rates(file, text);
    let (rate, port) = rates.first()?.clone();
    if rate <= 0.0 || rates.iter().any(|(other, _)| (other - rate).abs() > 0.5) || average >= FAR_BELOW * rate {
        return None;
    }
    let mut finding = Finding::new(
        "triage.bandwidth",
        Verdict::Warn,
        "perftest",
        format!(
            "the average at {bytes} bytes is {average:.1} Gb/s, {:.0} % of the port's {rate:.0} Gb/s: the link is not what limits it; check the NIC's PCIe link (`fabricdoctor check --only pcie.`), its firmware state after a reset, and the peer's port and path",
            100.0 * average / rate
        ),
    );
    finding.evidence = vec![cite(&row), cite(&port)];
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DGX Spark ConnectX-7 whose cable went in while the host ran (ai-infra-notes): ib_write_bw
    /// at 13 Gb/s on a port at 2X 100 Gb/s.
    #[test]
    fn perftest_far_below_the_port_rate_is_said_with_its_figures() {
        let text = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 1048576    9534             0.00               13.33  \t\t   0.001589\nstate:\t\t\tPORT_ACTIVE (4)\nactive_width:\t\t2X (16)\nactive_speed:\t\t100.0 Gbps (128)\n";
        let finding = below_port_rate("f", text).expect("a warning");
        assert_eq!(finding.verdict, Verdict::Warn);
        assert!(
            finding.message.starts_with("the average at 1048576 bytes is 13.3 Gb/s, 7 % of the port's 200 Gb/s"),
            "{}",
            finding.message
        );
        // MB/sec (perftest's default unit) at line rate on an HDR port: no warning.
        let healthy = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n 65536      5000             23000.00           22900.50             0.366\nRate: 200\n";
        assert!(below_port_rate("f", healthy).is_none());
        // Two ports of different rates: which one the test ran on is not known.
        let two = format!("{text}Rate: 400\n");
        assert!(below_port_rate("f", &two).is_none());
        // No rate in the input: nothing to compare with.
        assert!(below_port_rate("f", text.lines().take(2).collect::<Vec<_>>().join("\n").as_str()).is_none());
    }
}
