#!/usr/bin/env bash
# How fast the 64-host burn-in page opens in headless Chromium, and how big it is.
#
# The page is the synthetic 64-host burn-in of tests/integration/html.rs (two rails; one bad host, one
# bad cable), rendered by `fabricdoctor report html`; an eight-rail copy (the same matrices under
# eight rail names, 16 heatmaps of 64x64) is rendered too as the largest realistic page. Each page is
# loaded RUNS times in one headless Chromium driven by chromedriver (WebDriver over loopback); each
# run navigates from about:blank and records, from the page's own clock (performance.now(), origin =
# navigation start): DOMContentLoaded, the load event, first contentful paint, and the first frame
# after load (two requestAnimationFrame callbacks), which is "opened and rendered". Medians are
# printed. A cold start (a new `chromium --headless --screenshot` process for the page, browser
# start-up included) is timed too. The eight-rail page is also measured with every heatmap laid out
# at once (the page itself defers those below the screen).
#
# EXTRA_PAGES="DIR/report.html ..." measures further pages the same way, e.g. the summarised page of a
# simulated fleet (`fabricdoctor burnin --simulate MODEL --report-dir DIR`, bench/burnin-scale.sh).
#
# Needs chromium, chromium-driver, curl, jq (scripts/test-all.sh installs chromium and its driver).
# Usage: bash bench/html-render.sh [RUNS]   (default 7)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
for tool in chromium chromedriver curl jq python3; do
  command -v "$tool" >/dev/null || { echo "html-render: $tool is needed" >&2; exit 2; }
done

# The 64-host report and page, written by the structure test.
cargo test -q --test integration html::synthetic_64_host_burnin_page -- --exact >/dev/null
dir=target/tmp/html
binary=target/debug/fabricdoctor
work=$(mktemp -d)
driver_pid=""
cleanup() {
  [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Eight rails: the two measured rails' matrices repeated under eight names.
python3 - "$dir/report-64.json" "$work/report-64-8rails.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
pairs = report["pairs"]
report["pairs"] = [dict(pairs[i % len(pairs)], rail=f"mlx5_{i}") for i in range(8)]
json.dump(report, open(sys.argv[2], "w"))
EOF
"$binary" report html "$work/report-64-8rails.json" -o "$work/report-64-8rails.html"
cp "$dir/report-64.html" "$work/report-64.html"
# The page defers the layout of heatmaps below the screen (content-visibility: auto); this copy lays
# out all 16 at once, the cost of scrolling through everything.
sed 's/content-visibility: auto; contain-intrinsic-size: auto 900px; //' "$work/report-64-8rails.html" \
  > "$work/report-64-8rails-all-laid-out.html"

pages=(report-64.html report-64-8rails.html report-64-8rails-all-laid-out.html)
for extra in ${EXTRA_PAGES:-}; do
  name="$(basename "$(dirname "$extra")")-$(basename "$extra")"
  cp "$extra" "$work/$name"
  pages+=("$name")
done

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
chromedriver --port="$port" >/dev/null 2>&1 &
driver_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/status" >/dev/null && break; sleep 0.1; done
session=$(curl -sf -X POST "$base/session" -H 'Content-Type: application/json' -d "$(jq -n --arg profile "$work/profile" '
  {capabilities: {alwaysMatch: {browserName: "chrome", "goog:chromeOptions": {binary: "/usr/bin/chromium",
   args: ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000", ("--user-data-dir=" + $profile)]}}}}')" |
  jq -r .value.sessionId)
wd() { curl -sf -X POST "$base/session/$session/$1" -H 'Content-Type: application/json' -d "$2"; }
script='const done = arguments[arguments.length - 1];
window.addEventListener("load", () => requestAnimationFrame(() => requestAnimationFrame(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByType("paint").find(p => p.name === "first-contentful-paint");
  done({dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, fcp: paint ? paint.startTime : null,
        frame: performance.now(), cells: document.querySelectorAll("table.heatmap td").length});
})));
if (document.readyState === "complete") window.dispatchEvent(new Event("load"));'

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f", m}'; }

for page in "${pages[@]}"; do
  url="file://$work/$page"
  : > "$work/times"
  for _ in $(seq "$runs"); do
    wd url '{"url":"about:blank"}' >/dev/null
    wd url "$(jq -n --arg url "$url" '{url: $url}')" >/dev/null
    wd execute/async "$(jq -n --arg s "$script" '{script: $s, args: []}')" | jq -r '.value | "\(.frame) \(.load) \(.dcl) \(.fcp) \(.cells)"' >> "$work/times"
  done
  bytes=$(stat -c %s "$work/$page")
  cells=$(awk '{print $5}' "$work/times" | head -1)
  frame=$(awk '{print $1}' "$work/times" | median)
  load=$(awk '{print $2}' "$work/times" | median)
  dcl=$(awk '{print $3}' "$work/times" | median)
  fcp=$(awk '{print $4}' "$work/times" | median)
  cold_start=$(date +%s%N)
  chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/cold-$page" --window-size=1400,1000 \
    --screenshot="$work/$page.png" "$url" >/dev/null 2>&1
  cold=$(( ($(date +%s%N) - cold_start) / 1000000 ))
  printf '%-38s %8d bytes (%.2f MB) %6d heatmap cells | median of %d: rendered %5d ms, load %5d ms, DOMContentLoaded %5d ms, first paint %5d ms | cold chromium --screenshot %5d ms\n' \
    "$page" "$bytes" "$(echo "$bytes / 1048576" | bc -l)" "$cells" "$runs" "$frame" "$load" "$dcl" "$fcp" "$cold"
done
curl -sf -X DELETE "$base/session/$session" >/dev/null || true
