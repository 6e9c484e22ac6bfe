//! The HTML report: the structure of the pages `report html`, `check --html` and `topo --html` write
//! (from the small burn-in fixture and a synthetic, deterministic 64-host burn-in with one bad host and
//! one bad cable), and the 64-host page in a real browser: headless Chromium driven over WebDriver
//! (chromedriver) counts the heatmap cells, checks that suspects are outlined, that the filters and
//! tooltip work, and that the page made no network request; a screenshot is kept under
//! target/tmp/html/. Without chromium and chromedriver the browser test prints a SKIP line, or fails
//! when FABRICDOCTOR_REQUIRE_CHROMIUM=1 (scripts/test-all.sh sets it after installing them).

use std::path::{Path, PathBuf};

use fabricdoctor_checks::{Finding, Verdict};
use fabricdoctor_report::burnin::{
    BurninHost, BurninReport, CounterCategories, CounterInterval, HostCheck, HostStatus, PairMatrix, Phase,
    PhaseStatus, Rail, RunInfo, SignOff, SignOffVerdict, Suspect, SuspectKind,
};
use fabricdoctor_report::{HostInfo, Report};

use crate::support;

const HOSTS: usize = 64;
const BAD_HOST: usize = 17;
const BAD_LINK: (usize, usize) = (5, 40);
const RAILS: [&str; 2] = ["mlx5_0", "mlx5_1"];
const BAD_LINK_RAIL: &str = "mlx5_1";
/// A hostname that would run a script if the page did not escape it.
const HOSTILE_HOST: &str = "gpu-node-63\"><script>window.fabricdoctorInjected=1</script>";
/// The size a page must stay under to be mailed and attached to tickets.
const MAX_PAGE_BYTES: u64 = 2 * 1024 * 1024;

fn host_name(i: usize) -> String {
    if i == HOSTS - 1 {
        HOSTILE_HOST.to_string()
    } else {
        format!("gpu-node-{i:02}")
    }
}

fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html");
    std::fs::create_dir_all(&dir).expect("artefact directory");
    dir
}

/// `topo --json`'s topology of the HGX H100 fixture: what a burn-in embeds per host.
fn hgx_topology() -> serde_json::Value {
    let root = support::fixture("hgx-h100");
    let output = support::run(&["topo", "--json", "--root", root.to_str().unwrap()]);
    assert!(output.status.success(), "topo --json: {}", support::stderr(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("topo JSON");
    document["topology"].clone()
}

/// A deterministic 64-host burn-in over two rails: every pair near 97 Gb/s and 2.1 µs, except every
/// pair with host 17 (a bad host: a dark row and column) and the pair 5<->40 on rail mlx5_1 (a bad
/// cable: one dark cell each way).
pub fn synthetic_report() -> BurninReport {
    let at = |s: u32| format!("2026-11-22T10:{:02}:{:02}.000Z", s / 60 % 60, s % 60);
    let names: Vec<String> = (0..HOSTS).map(host_name).collect();
    let run = RunInfo {
        run_id: "64hostsynthetic0".into(),
        started_at: at(0),
        finished_at: Some(at(3000)),
        duration_s: 3000.0,
        playbook: "default".into(),
        playbook_source: "built-in".into(),
        transport: "verbs".into(),
        launcher: "slurm".into(),
        complete: true,
        stopped: None,
        steps_done: 4200,
        resumed: 0,
        pair_test: None,
    };
    let hosts = names
        .iter()
        .enumerate()
        .map(|(i, name)| BurninHost {
            name: name.clone(),
            address: format!("10.1.{}.{}:7207", i / 250, i % 250 + 1),
            status: HostStatus::Ok,
            status_at: None,
            reason: None,
            last_step: Some("allreduce#2".into()),
            rails: RAILS
                .iter()
                .map(|r| Rail {
                    name: (*r).into(),
                    address: format!("10.{}.0.{}", r.len(), i + 1),
                    link_gbps: None,
                    link: None,
                })
                .collect(),
            hostname: Some(name.clone()),
            agent_version: Some("0.1.0".into()),
            leaf: None,
        })
        .collect();
    let mut report = BurninReport::new(run, hosts);
    report.generated_at = at(3000);
    let phase_names = [
        "check",
        "loopback",
        "pairwise",
        "isolation",
        "alltoall",
        "allreduce",
        "pairwise",
        "alltoall",
        "allreduce",
        "signoff",
    ];
    report.phases = phase_names
        .iter()
        .enumerate()
        .map(|(k, name)| Phase {
            name: (*name).into(),
            iteration: u32::from(k >= 6),
            started_at: at(k as u32 * 300),
            start_offset_s: k as f64 * 300.0,
            ended_at: Some(at(k as u32 * 300 + 300)),
            end_offset_s: Some(k as f64 * 300.0 + 300.0),
            status: PhaseStatus::Done,
            steps_done: 10,
            steps_total: 10,
        })
        .collect();
    let bad_link = |rail: &str, a: usize, b: usize| rail == BAD_LINK_RAIL && ((a, b) == BAD_LINK || (b, a) == BAD_LINK);
    report.pairs = RAILS
        .iter()
        .map(|rail| {
            // Healthy pairs vary by up to 1 % (worse bandwidth, higher latency) so the scale has steps.
            let cell = |a: usize, b: usize, good: f64, host: f64, link: f64, higher_is_better: bool| {
                (a != b).then(|| {
                    let jitter = ((a * 7 + b * 13) % 10) as f64 * 0.001;
                    if a == BAD_HOST || b == BAD_HOST {
                        host
                    } else if bad_link(rail, a, b) {
                        link
                    } else if higher_is_better {
                        good * (1.0 - jitter)
                    } else {
                        good * (1.0 + jitter)
                    }
                })
            };
            let matrix = |good: f64, host: f64, link: f64, higher_is_better: bool| -> Vec<Vec<Option<f64>>> {
                (0..HOSTS)
                    .map(|a| (0..HOSTS).map(|b| cell(a, b, good, host, link, higher_is_better)).collect())
                    .collect()
            };
            PairMatrix {
                rail: (*rail).into(),
                hosts: names.clone(),
                bw_gbps: matrix(97.0, 41.0, 12.5, true),
                lat_us: matrix(2.1, 5.8, 9.0, false),
                pairs: Vec::new(),
                summary: None,
            }
        })
        .collect();
    // Counters: quiet merged intervals everywhere, port errors on the bad host, retransmits on the
    // ends of the bad cable.
    for (i, name) in names.iter().enumerate() {
        for (k, phase) in report.phases.clone().iter().enumerate() {
            let mut totals = CounterCategories::default();
            if i == BAD_HOST && (2..9).contains(&k) {
                totals.port_errors = 400 * k as u64;
                totals.pfc_pause = 12_000;
            }
            if (i == BAD_LINK.0 || i == BAD_LINK.1) && (k == 2 || k == 6) {
                totals.retransmits = 3_100;
            }
            report.counters.intervals.push(CounterInterval {
                host: name.clone(),
                phase: format!("{}#{}", phase.name, phase.iteration),
                start_offset_s: phase.start_offset_s,
                end_offset_s: phase.end_offset_s.unwrap_or(phase.start_offset_s),
                end_at: phase.ended_at.clone().unwrap_or_default(),
                totals,
                deltas: Vec::new(),
                merged: 1,
            });
        }
    }
    let (a, b) = (host_name(BAD_LINK.0), host_name(BAD_LINK.1));
    report.findings = vec![
        Finding::new(
            "burnin.pair.bandwidth",
            Verdict::Fail,
            format!("{a}<->{b} {BAD_LINK_RAIL}"),
            "pair below tolerance: <script>window.fabricdoctorInjected=2</script>",
        )
        .expected(">= 90.2 Gb/s (0.93 x best pair 97.0 Gb/s)")
        .observed("12.5 Gb/s"),
        Finding::new(
            "burnin.pair.latency",
            Verdict::Fail,
            format!("{a}<->{b} {BAD_LINK_RAIL}"),
            "pair above 2.1x the lowest latency",
        ),
        Finding::new(
            "burnin.host.counters",
            Verdict::Fail,
            host_name(BAD_HOST),
            "port errors grew by 11200 during the run",
        ),
    ];
    report.suspects = vec![
        Suspect {
            kind: SuspectKind::Host,
            subject: host_name(BAD_HOST),
            host: host_name(BAD_HOST),
            confidence: 0.95,
            action: "take gpu-node-17 out and check its NICs and PCIe links".into(),
            evidence: vec![
                "every pair with gpu-node-17 ran at 41.0 Gb/s on both rails; others at 96.1-97.0 Gb/s".into()
            ],
            finding_ids: vec!["burnin.host.counters".into()],
        },
        Suspect {
            kind: SuspectKind::Link,
            subject: format!("{a}<->{b} {BAD_LINK_RAIL}"),
            host: a.clone(),
            confidence: 0.8,
            action: format!("reseat, then replace, the {BAD_LINK_RAIL} cables of {a} and {b}"),
            evidence: vec![format!(
                "{a}<->{b} on {BAD_LINK_RAIL}: 12.5 Gb/s; both hosts at full rate with other partners"
            )],
            finding_ids: vec!["burnin.pair.bandwidth".into()],
        },
    ];
    report.signoff = SignOff {
        verdict: SignOffVerdict::Fail,
        reasons: vec!["zero data errors: ok".into(), "pairs below tolerance: 128".into()],
    };
    let topology = hgx_topology();
    report.host_checks = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut findings = vec![Finding::new("pcie.link.width", Verdict::Pass, "0000:19:00.0 (mlx5_0)", "x16")];
            if i == BAD_HOST {
                findings.push(Finding::new(
                    "pcie.link.width",
                    Verdict::Fail,
                    "0000:c9:00.0 (mlx5_7)",
                    "trained at x4 of x16",
                ));
            }
            let host = HostInfo { hostname: name.clone(), kernel_release: Some("6.8.0".into()), source: "live".into() };
            let mut check = Report::new("check", vec![host], findings);
            check.generated_at = at(1);
            HostCheck {
                host: name.clone(),
                worst: check.worst(),
                report: Some(check),
                topology: Some(topology.clone()),
                error: None,
                excluded: false,
            }
        })
        .collect();
    report
}

/// Writes the report and renders it with `fabricdoctor report html` into `<name>.html` (one name per
/// test: tests run in parallel); returns the page's path.
fn render_synthetic(name: &str) -> PathBuf {
    let dir = artefacts();
    let json = dir.join(format!("{name}.json"));
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&json, serde_json::to_string_pretty(&synthetic_report()).expect("serialize")).expect("write report");
    let output = support::run(&["report", "html", json.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert!(output.status.success(), "report html: {}", support::stderr(&output));
    page
}

/// Count of `needle` between the start of the element with `id` and the end of its table.
fn in_table(html: &str, id: &str, needle: &str) -> usize {
    in_table_at(html, &format!("id=\"{id}\""), needle)
}

/// Count of `needle` between `marker` and the end of the table it opens.
fn in_table_at(html: &str, marker: &str, needle: &str) -> usize {
    let start = html.find(marker).unwrap_or_else(|| panic!("table {marker}"));
    let end = start + html[start..].find("</table>").expect("table end");
    html[start..end].matches(needle).count()
}

/// The rows of a heatmap as the cell tags in it (`<td class=q0>`, `<td class="q7 sh">` ...).
fn heatmap_rows(html: &str, id: &str) -> Vec<Vec<String>> {
    let start = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("table {id}"));
    let end = start + html[start..].find("</table>").expect("table end");
    let body = &html[start..end];
    let body = &body[body.find("<tbody>").expect("tbody")..];
    body.split("<tr ")
        .skip(1)
        .map(|row| {
            row.split("<td").skip(1).map(|cell| cell[..cell.find('>').expect("tag end")].trim().to_string()).collect()
        })
        .collect()
}

#[test]
fn small_burnin_fixture_renders_every_section() {
    let fixture = support::fixture("burnin/report-small.json");
    let output = support::run(&["report", "html", fixture.to_str().unwrap()]);
    assert!(output.status.success(), "{}", support::stderr(&output));
    let html = support::stdout(&output);
    // The outline of the page, in order: what an operator reads top to bottom.
    let sections: Vec<&str> =
        html.split("<section id=\"").skip(1).map(|s| &s[..s.find('"').expect("id end")]).collect();
    assert_eq!(
        sections,
        [
            "signoff",
            "suspects",
            "heatmaps",
            "timelines",
            "hosts",
            "loopback",
            "collectives",
            "baseline",
            "topology",
            "findings"
        ]
    );
    assert!(html.contains("Sign-off: not signed off: 1 suspect"));
    // One rail, four hosts: a bandwidth and a latency matrix of 16 cells each.
    assert_eq!(in_table(&html, "bandwidth-0", "<td"), 16);
    assert_eq!(in_table(&html, "latency-1", "<td"), 16);
    // The suspect is node1's cable: node1's row and column are marked in both matrices, and the pair
    // the bandwidth finding names (node1<->node0) is outlined both ways.
    let rows = heatmap_rows(&html, "bandwidth-0");
    assert!(rows[1].iter().all(|c| c.contains("sh")), "node1's row marked: {:?}", rows[1]);
    assert!(rows.iter().all(|r| r[1].contains("sh")), "node1's column marked");
    assert!(!rows[2][3].contains("sh"), "node2->node3 is not marked");
    let outlined: Vec<(usize, usize)> =
        (0..4).flat_map(|i| (0..4).map(move |j| (i, j))).filter(|&(i, j)| rows[i][j].contains("sl")).collect();
    assert_eq!(outlined, [(0, 1), (1, 0)]);
    assert!(!heatmap_rows(&html, "latency-1").iter().flatten().any(|c| c.contains("sl")), "no latency finding");
    // 0.95 Gb/s against a best pair of 9.4 is the darkest step; the diagonal is not measured.
    assert_eq!(rows[1][0], "class=\"q9 sh sl\"");
    assert_eq!(rows[0][0], "class=na");
    assert_eq!(rows[1][1], "class=\"na sh\"");
    // node1's port errors are the only counters that moved.
    assert_eq!(html.matches("<svg class=\"timeline\"").count(), 1);
    assert!(html.contains("No counter moved on 1 host: node0"));
    assert!(html.contains("agent stopped answering: connection reset by peer"));
    assert!(html.contains("node0, node1, node2, node3: no GPU or RDMA NIC in the topology"));
}

#[test]
fn synthetic_64_host_burnin_page_shows_the_bad_host_and_the_bad_cable() {
    let page = render_synthetic("report-64");
    let size = std::fs::metadata(&page).expect("page").len();
    assert!(size < MAX_PAGE_BYTES, "page is {size} bytes, over {MAX_PAGE_BYTES}");
    let html = std::fs::read_to_string(&page).expect("read page");
    // Two rails, two metrics: four 64x64 matrices.
    for id in ["bandwidth-0", "bandwidth-1", "latency-2", "latency-3"] {
        let rows = heatmap_rows(&html, id);
        assert_eq!(rows.len(), HOSTS, "{id}");
        assert!(rows.iter().all(|r| r.len() == HOSTS), "{id}: 64 cells a row");
        // The bad host: its row and column marked and dark, every other cell of its row too.
        let step = |cell: &str| cell.trim_start_matches("class=\"q").chars().next().and_then(|c| c.to_digit(10));
        assert!(
            rows[BAD_HOST].iter().enumerate().all(|(j, c)| j == BAD_HOST || (step(c) >= Some(7) && c.contains(" sh"))),
            "{id}: {:?}",
            &rows[BAD_HOST][..4]
        );
        assert!(
            rows[0][1].starts_with("class=q0") || rows[0][1].starts_with("class=q1"),
            "{id}: healthy pair light: {}",
            rows[0][1]
        );
        let outlined: Vec<(usize, usize)> = (0..HOSTS)
            .flat_map(|i| (0..HOSTS).map(move |j| (i, j)))
            .filter(|&(i, j)| rows[i][j].contains("sl"))
            .collect();
        let on_bad_rail = id.ends_with('1') || id.ends_with('3');
        if on_bad_rail {
            assert_eq!(outlined, [BAD_LINK, (BAD_LINK.1, BAD_LINK.0)], "{id}");
            assert!(rows[BAD_LINK.0][BAD_LINK.1].starts_with("class=\"q9"), "{id}: the bad cable is the darkest step");
        } else {
            assert!(outlined.is_empty(), "{id}: the cable is bad on {BAD_LINK_RAIL} only: {outlined:?}");
        }
    }
    // Hostile strings are text, never markup: the only script is the page's own.
    assert_eq!(html.matches("<script").count(), 1, "one script element");
    assert!(!html.contains("fabricdoctorInjected=1</script>"));
    assert!(html.contains("gpu-node-63&quot;&gt;&lt;script&gt;window.fabricdoctorInjected=1&lt;/script&gt;"));
    assert!(html.contains("&lt;script&gt;window.fabricdoctorInjected=2&lt;/script&gt;"));
    // 64 identical layouts are drawn once; the bad host, whose NIC link is marked, on its own.
    assert_eq!(html.matches("<svg class=\"topology\"").count(), 2);
    assert!(html.contains("63 hosts with this layout and nothing marked"));
    assert!(html.contains("<path class=\"link v-fail\""), "the x4 link of gpu-node-17's mlx5_7 is marked");
    // Timelines: the bad host first, then the two ends of the bad cable; 61 quiet hosts in one line.
    let timelines: Vec<&str> = html
        .split("<figure class=\"host-timeline")
        .skip(1)
        .map(|s| &s[s.find("<figcaption>").expect("caption") + 12..s.find("</figcaption>").expect("caption end")])
        .collect();
    assert_eq!(timelines, ["gpu-node-17", "gpu-node-05", "gpu-node-40"]);
    assert!(html.contains("No counter moved on 61 hosts"));
    eprintln!("64-host page: {size} bytes ({})", page.display());

    // The largest realistic page: eight rails (16 heatmaps of 64x64) still under the limit.
    let mut eight = synthetic_report();
    eight.pairs = (0..8)
        .map(|i| PairMatrix { rail: format!("mlx5_{i}"), ..eight.pairs[i % eight.pairs.len()].clone() })
        .collect();
    let json = artefacts().join("report-64-8rails.json");
    let page = artefacts().join("report-64-8rails.html");
    std::fs::write(&json, serde_json::to_string(&eight).expect("serialize")).expect("write report");
    let output = support::run(&["report", "html", json.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert!(output.status.success(), "{}", support::stderr(&output));
    let size = std::fs::metadata(&page).expect("page").len();
    assert!(size < MAX_PAGE_BYTES, "eight-rail page is {size} bytes, over {MAX_PAGE_BYTES}");
    let html = std::fs::read_to_string(&page).expect("read page");
    assert_eq!(html.matches("<table class=\"heatmap\"").count(), 16);
    eprintln!("64-host page with 8 rails: {size} bytes");
}

#[test]
fn check_and_topo_write_single_node_pages() {
    let dir = artefacts();
    let faulty = support::fixture("faulty-node");
    let page = dir.join("check-faulty.html");
    let output = support::run(&["check", "--root", faulty.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "faulty node fails: {}", support::stderr(&output));
    assert!(support::stdout(&output).contains("pcie.link.width"), "text output still printed");
    let html = std::fs::read_to_string(&page).expect("check page");
    let (report, _) = support::check_json(&faulty, &[]);
    let findings = report["findings"].as_array().expect("findings").len();
    assert_eq!(in_table(&html, "findings-table", "<tr class="), findings, "one row per finding");
    // mlx5_1 trained at x8: its link is drawn failing; GPU3 far from every NIC: the device is marked.
    assert!(html.contains("<path class=\"link v-fail\""), "a failing link");
    let gpu3 = html.find("<g class=\"node gpu v-fail\"><title>GPU3").is_some();
    assert!(gpu3, "GPU3 marked by topo.gpu_nic.affinity");
    assert!(html.contains("<g class=\"rail rel-sys\"><title>rail: GPU3 → NIC3"));

    // The same findings through `check --json` and `report html`: the page says why it has no picture.
    let json = dir.join("check-faulty.json");
    std::fs::write(&json, serde_json::to_string(&report).expect("serialize")).expect("write report");
    let output = support::run(&["report", "html", json.to_str().unwrap()]);
    assert!(output.status.success(), "{}", support::stderr(&output));
    let from_json = support::stdout(&output);
    assert_eq!(in_table(&from_json, "findings-table", "<tr class="), findings);
    assert!(from_json.contains("This report carries no topology"));
    assert!(!from_json.contains("<svg"));

    let hgx = support::fixture("hgx-h100");
    let page = dir.join("topo-hgx.html");
    let output = support::run(&["topo", "--root", hgx.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert!(output.status.success(), "{}", support::stderr(&output));
    let html = std::fs::read_to_string(&page).expect("topo page");
    assert_eq!(html.matches("<g class=\"node gpu").count(), 8);
    assert_eq!(html.matches("<g class=\"node nic").count(), 8);
    assert_eq!(html.matches("<g class=\"node switch").count(), 8);
    assert_eq!(html.matches("<g class=\"node numa").count(), 2);
    assert_eq!(html.matches("<g class=\"rail rel-pix\">").count(), 8, "eight PIX rails");
    assert_eq!(in_table_at(&html, "<table class=\"relations", "<td"), 16 * 16);
}

#[test]
fn report_html_names_the_bad_input_and_keeps_the_previous_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    std::fs::write(&page, "previous page").expect("write");
    let case = |name: &str, content: &str, expected: &str| {
        let input = dir.path().join(name);
        std::fs::write(&input, content).expect("write input");
        let output = support::run(&["report", "html", input.to_str().unwrap(), "-o", page.to_str().unwrap()]);
        let stderr = support::stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(name) && stderr.contains(expected), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    };
    case("truncated.json", "{\"schema_version\": 1, \"run\": {", "not JSON");
    case("future.json", "{\"schema_version\": 99, \"command\": \"check\"}", "schema version 99");
    let small = std::fs::read_to_string(crate::support::fixture("burnin/report-small.json")).expect("fixture");
    let mut burnin: serde_json::Value = serde_json::from_str(&small).expect("example report");
    burnin["schema_version"] = serde_json::json!(7);
    case("burnin-future.json", &burnin.to_string(), "version Some(7)");
    case("array.json", "[1, 2]", "not a fabricdoctor report");
    case("check-wrong.json", "{\"schema_version\": 1, \"command\": \"check\", \"hosts\": 3}", "check report schema");
    let missing = dir.path().join("missing.json");
    let output = support::run(&["report", "html", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(support::stderr(&output).contains("missing.json"));
    assert_eq!(std::fs::read_to_string(&page).expect("page"), "previous page");
}

/// The page in headless Chromium: cells, outlines, filters, tooltip, no network request, screenshot.
#[test]
fn burnin_page_in_chromium() {
    let Some(browser) = webdriver::Browser::start("burnin_page_in_chromium") else { return };
    let page = render_synthetic("report-64-browser");
    let url = format!("file://{}", page.canonicalize().expect("page path").display());
    browser.navigate("about:blank");
    let _ = browser.requests(url.as_str());
    browser.navigate(&url);
    let result = browser.execute(
        r##"
        const heatmaps = Array.from(document.querySelectorAll("table.heatmap"));
        const outlined = document.querySelectorAll("table.heatmap td.sl");
        const style = outlined.length ? getComputedStyle(outlined[0]) : null;
        const healthy = document.querySelector("table.heatmap td.q0");
        const form = document.querySelector("form.filters");
        const visible = () => Array.from(document.querySelectorAll("#findings-table tbody tr")).filter(r => !r.hidden).length;
        const before = visible();
        const id = form.querySelector("input[name=id]");
        id.value = "burnin.pair";
        id.dispatchEvent(new Event("input", { bubbles: true }));
        const pairOnly = visible();
        id.value = "";
        id.dispatchEvent(new Event("input", { bubbles: true }));
        form.querySelector("input[value=pass]").click();
        const withPasses = visible();
        outlined[0].dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
        const tooltip = document.getElementById("tooltip");
        return {
          cells: heatmaps.map(t => t.querySelectorAll("tbody td").length),
          outlined: outlined.length,
          outline: style ? style.outlineStyle + " " + style.outlineWidth : "none",
          healthyOutline: getComputedStyle(healthy).outlineStyle,
          rowsBefore: before, rowsPairOnly: pairOnly, rowsWithPasses: withPasses,
          tooltip: tooltip.hidden ? "" : tooltip.textContent,
          injected: typeof window.fabricdoctorInjected,
          resources: performance.getEntriesByType("resource").map(e => e.name),
          topologyNodes: document.querySelectorAll("svg.topology g.node").length,
        };
        "##,
    );
    eprintln!("browser: {result}");
    assert_eq!(result["cells"], serde_json::json!([4096, 4096, 4096, 4096]));
    assert_eq!(result["outlined"], 4, "the bad cable, both ways, bandwidth and latency");
    assert_eq!(result["outline"], "solid 2px");
    assert_eq!(result["healthyOutline"], "none");
    assert_eq!(result["rowsBefore"], 4, "three burn-in findings and gpu-node-17's link");
    assert_eq!(result["rowsPairOnly"], 2);
    // 64 pcie.link.width passes, listed one by one (under the PASS_ROWS_LIMIT of 1000).
    assert_eq!(result["rowsWithPasses"], 4 + HOSTS);
    let tooltip = result["tooltip"].as_str().unwrap_or_default();
    assert!(tooltip.contains("gpu-node-05 → gpu-node-40: 12.5 Gb/s") && tooltip.contains("suspect pair"), "{tooltip}");
    assert_eq!(result["injected"], "undefined", "no hostile script ran");
    assert_eq!(result["resources"], serde_json::json!([]), "no resource fetched");
    // What the browser's network stack saw, from the DevTools log: the page itself and nothing else.
    let requests = browser.requests(&url);
    assert_eq!(requests, std::slice::from_ref(&url), "network requests of the page");
    browser.screenshot(&artefacts().join("report-64.png"));

    // The same check catches a page that does fetch (the check can fail): a copy without the policy
    // and with an image on a loopback port that nothing serves.
    let leaky = artefacts().join("leaky.html");
    let html = std::fs::read_to_string(&page).expect("page");
    let html = html.replacen("http-equiv=\"Content-Security-Policy\"", "name=\"removed\"", 1).replacen(
        "<main>",
        "<main><img src=\"http://127.0.0.1:9/fetched.png\">",
        1,
    );
    std::fs::write(&leaky, html).expect("write leaky page");
    let leaky_url = format!("file://{}", leaky.canonicalize().expect("leaky path").display());
    browser.navigate(&leaky_url);
    let requests = browser.requests(&leaky_url);
    assert!(requests.iter().any(|r| r == "http://127.0.0.1:9/fetched.png"), "the fetch is seen: {requests:?}");
}

/// Above 128 hosts a rail is drawn as tiles of leaf x leaf: clicking one lists the hosts of both
/// leaves and names the tile's worst pair, here the bad cable's host.
#[test]
fn a_tile_of_a_fleet_sized_page_opens_its_hosts_in_chromium() {
    let Some(browser) = webdriver::Browser::start("a_tile_of_a_fleet_sized_page_opens_its_hosts_in_chromium") else {
        return;
    };
    let parent = tempfile::tempdir().expect("tempdir");
    let (output, dir) = crate::simulation::run_simulated(
        parent.path(),
        "hosts = 160\nrails = 1\nhosts_per_leaf = 32\nnoise = 0.03\nseed = 3\n\
         [[faults]]\nkind = \"bad_cable\"\nhost = 70\nrail = 0\nfraction = 0.5\n",
        &["--duration", "5m"],
    );
    assert_eq!(output.status.code(), Some(1), "the cable is found: {}", support::stderr(&output));
    let page = dir.join("report.html");
    let html = std::fs::read_to_string(&page).expect("report.html");
    // A leaf with itself is the tile of its own pairs: coloured like the others, not "not measured".
    let rows = heatmap_rows(&html, "bandwidth-0");
    assert_eq!(rows.len(), 5, "five leaves");
    assert!((0..5).all(|g| rows[g][g] != "class=na"), "{rows:?}");
    let url = format!("file://{}", page.canonicalize().expect("page path").display());
    browser.navigate(&url);
    let result = browser.execute(
        r##"
        const tiles = Array.from(document.querySelectorAll("table.heatmap[data-tiles]"));
        const bandwidth = tiles[0];
        const cell = bandwidth.tBodies[0].rows[2].cells[1];
        cell.dispatchEvent(new MouseEvent("click", { bubbles: true }));
        const panel = bandwidth.closest("figure").nextElementSibling;
        cell.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
        return {
          tables: tiles.length,
          latencyWorst: tiles[1].querySelectorAll("tr[data-worst]").length,
          panel: panel && panel.classList.contains("tile-hosts") ? panel.textContent : "",
          tooltip: document.getElementById("tooltip").textContent,
        };
        "##,
    );
    eprintln!("browser: {result}");
    assert_eq!(result["tables"], 2, "bandwidth and latency tiles");
    assert_eq!(result["latencyWorst"], 0, "the summary names a worst pair by bandwidth only");
    let panel = result["panel"].as_str().unwrap_or_default();
    let lines: Vec<&str> = panel.lines().collect();
    assert!(lines.len() == 4 && lines[0].starts_with("leaf2 → leaf0: "), "{panel}");
    assert!(lines[1].starts_with("worst pair: sim0070->sim00"), "{panel}");
    let leaf2: Vec<String> = (64..96).map(|h| format!("sim{h:04}")).collect();
    let leaf0: Vec<String> = (0..32).map(|h| format!("sim{h:04}")).collect();
    assert_eq!(lines[2], format!("clients, leaf2 (32 hosts): {}", leaf2.join(", ")));
    assert_eq!(lines[3], format!("servers, leaf0 (32 hosts): {}", leaf0.join(", ")));
    let tooltip = result["tooltip"].as_str().unwrap_or_default();
    assert!(tooltip.contains("worst pair: sim0070->") && tooltip.contains("click for the hosts"), "{tooltip}");
}

/// A minimal WebDriver (W3C) client for chromedriver on loopback: plain HTTP/1.1 with JSON bodies.
mod webdriver {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};

    pub struct Browser {
        driver: Child,
        port: u16,
        session: String,
        _profile: tempfile::TempDir,
    }

    fn required() -> bool {
        std::env::var("FABRICDOCTOR_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1")
    }

    fn find(names: &[&str]) -> Option<String> {
        let path = std::env::var_os("PATH")?;
        names.iter().find_map(|name| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
                .map(|p| p.display().to_string())
        })
    }

    impl Browser {
        /// Chromium under chromedriver, or `None` after a SKIP line when either is missing (a failure
        /// when FABRICDOCTOR_REQUIRE_CHROMIUM=1).
        pub fn start(test: &str) -> Option<Browser> {
            let (Some(chromium), Some(chromedriver)) =
                (find(&["chromium", "chromium-browser", "google-chrome"]), find(&["chromedriver"]))
            else {
                assert!(!required(), "FABRICDOCTOR_REQUIRE_CHROMIUM=1 but chromium or chromedriver is not installed");
                crate::support::loud_eprintln!(
                    "SKIP: {test}: chromium and chromedriver are needed (apt-get install chromium chromium-driver)"
                );
                return None;
            };
            let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
            let driver = Command::new(&chromedriver)
                .arg(format!("--port={port}"))
                // Kept beside the screenshot, for when a session cannot be created or a command fails.
                .arg(format!("--log-path={}", super::artefacts().join(format!("chromedriver-{test}.log")).display()))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start chromedriver");
            let profile = tempfile::tempdir().expect("profile directory");
            let mut browser = Browser { driver, port, session: String::new(), _profile: profile };
            let deadline = Instant::now() + Duration::from_secs(20);
            while browser.request("GET", "/status", None).is_err() {
                assert!(Instant::now() < deadline, "chromedriver did not answer on port {port}");
                std::thread::sleep(Duration::from_millis(100));
            }
            let capabilities = json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": chromium,
                    "args": ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,2400",
                             format!("--user-data-dir={}", browser._profile.path().display())],
                },
                "goog:loggingPrefs": {"performance": "ALL"},
            }}});
            // A browser that does not start within chromedriver's limit on a loaded machine ("session
            // not created") gets two more tries; any other error fails the test.
            for attempt in 1..=3 {
                let response = browser.request("POST", "/session", Some(&capabilities));
                let value = response.unwrap_or_else(|e| panic!("POST /session: {e}"))["value"].clone();
                match (value["sessionId"].as_str(), value.get("error").and_then(Value::as_str)) {
                    (Some(id), _) => {
                        browser.session = id.to_string();
                        break;
                    }
                    (None, Some("session not created")) if attempt < 3 => {
                        eprintln!("chromium did not start, retrying: {value}")
                    }
                    _ => panic!("POST /session: {value}"),
                }
            }
            Some(browser)
        }

        fn request(&self, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<Value> {
            let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
            stream.set_read_timeout(Some(Duration::from_secs(120)))?;
            let body = body.map(Value::to_string).unwrap_or_default();
            write!(
                stream,
                "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                self.port,
                body.len()
            )?;
            // chromedriver keeps the connection open whatever the request says: read the head, then
            // exactly Content-Length bytes (or chunks up to the last one).
            let mut response = Vec::new();
            let mut buffer = [0u8; 65536];
            let head_end = loop {
                if let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") {
                    break end + 4;
                }
                let n = stream.read(&mut buffer)?;
                if n == 0 {
                    return Err(std::io::Error::other("connection closed before the response head"));
                }
                response.extend_from_slice(&buffer[..n]);
            };
            let head = String::from_utf8_lossy(&response[..head_end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            let chunked = head.contains("transfer-encoding: chunked");
            loop {
                let body = &response[head_end..];
                let complete = match length {
                    Some(length) => body.len() >= length,
                    None if chunked => body.ends_with(b"0\r\n\r\n"),
                    None => false,
                };
                if complete {
                    break;
                }
                let n = stream.read(&mut buffer)?;
                if n == 0 {
                    break;
                }
                response.extend_from_slice(&buffer[..n]);
            }
            let body = String::from_utf8_lossy(&response[head_end..]).into_owned();
            let payload = if chunked { dechunk(&body) } else { body };
            serde_json::from_str(&payload).map_err(|e| std::io::Error::other(format!("{e}: {payload}")))
        }

        fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
            let response = self.request(method, path, body.as_ref()).unwrap_or_else(|e| panic!("{method} {path}: {e}"));
            let value = response["value"].clone();
            assert!(value.get("error").is_none(), "{method} {path}: {value}");
            value
        }

        /// Loads `url` and waits for its load event. chromedriver gives up on a renderer that takes
        /// over 10 s to answer ("timeout: Timed out receiving message from renderer"), which a loaded
        /// 2-core CI machine can cause: such a timeout is retried twice, any other error fails.
        pub fn navigate(&self, url: &str) {
            let path = format!("/session/{}/url", self.session);
            for attempt in 1..=3 {
                let response = self.request("POST", &path, Some(&json!({ "url": url })));
                let value = response.unwrap_or_else(|e| panic!("POST {path}: {e}"))["value"].clone();
                match value.get("error").and_then(Value::as_str) {
                    None => return,
                    Some("timeout") if attempt < 3 => eprintln!("navigate {url}: renderer timeout, retrying: {value}"),
                    Some(_) => panic!("POST {path}: {value}"),
                }
            }
        }

        pub fn execute(&self, script: &str) -> Value {
            self.call(
                "POST",
                &format!("/session/{}/execute/sync", self.session),
                Some(json!({"script": script, "args": []})),
            )
        }

        /// URLs of the requests the DevTools network domain saw since the last call, made by the
        /// document at `document` (the page itself, and anything it fetched).
        pub fn requests(&self, document: &str) -> Vec<String> {
            let log =
                self.call("POST", &format!("/session/{}/se/log", self.session), Some(json!({"type": "performance"})));
            log.as_array()
                .into_iter()
                .flatten()
                .filter_map(|entry| serde_json::from_str::<Value>(entry["message"].as_str()?).ok())
                .filter(|m| m["message"]["method"] == "Network.requestWillBeSent")
                .filter(|m| m["message"]["params"]["documentURL"] == document)
                .filter_map(|m| m["message"]["params"]["request"]["url"].as_str().map(String::from))
                .collect()
        }

        pub fn screenshot(&self, path: &Path) {
            let encoded = self.call("GET", &format!("/session/{}/screenshot", self.session), None);
            let png = base64_decode(encoded.as_str().expect("base64 screenshot"));
            assert!(png.starts_with(b"\x89PNG"), "a PNG");
            std::fs::write(path, png).expect("write screenshot");
            eprintln!("screenshot: {}", path.display());
        }
    }

    impl Drop for Browser {
        fn drop(&mut self) {
            if !self.session.is_empty() {
                let _ = self.request("DELETE", &format!("/session/{}", self.session), None);
            }
            let _ = self.driver.kill();
            let _ = self.driver.wait();
        }
    }

    /// HTTP/1.1 chunked transfer coding (RFC 9112, section 7.1).
    fn dechunk(mut body: &str) -> String {
        let mut out = String::new();
        while let Some((size, rest)) = body.split_once("\r\n") {
            let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
            if size == 0 || rest.len() < size {
                break;
            }
            out.push_str(&rest[..size]);
            body = rest[size..].trim_start_matches("\r\n");
        }
        out
    }

    /// Standard base64 (RFC 4648, section 4), as WebDriver returns screenshots.
    fn base64_decode(text: &str) -> Vec<u8> {
        let value = |c: u8| match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        };
        let sextets: Vec<u8> = text.bytes().filter_map(value).collect();
        let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
        for chunk in sextets.chunks(4) {
            let bits = chunk.iter().enumerate().fold(0u32, |acc, (i, s)| acc | (u32::from(*s) << (18 - 6 * i)));
            let bytes = bits.to_be_bytes();
            out.extend_from_slice(&bytes[1..chunk.len()]);
        }
        out
    }
}
