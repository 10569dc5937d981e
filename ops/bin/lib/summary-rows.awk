# Included by ops/bin/nemesis-totals and ops/bin/long-form-count (awk -F'|'): the rows of a nemesis
# summary table, as NemesisRun.summaryLine writes them:
#   | run | fault | seconds | operations | unknown outcome | faults injected | check | anomalies |
# summaryRow() is true on a table row (its run column is a number) and stores it under its run
# number in run, kind[], ops[], unknown[], faults[], check[] and anomalies[]; a run number seen
# again replaces its earlier row (a part run again counts once), keeping its first place in
# order[1..n].

function num(s) { gsub(/[ ,]/, "", s); return s + 0 }
function trim(s) { gsub(/^ +| +$/, "", s); return s }
function summaryRow() {
  if (trim($2) !~ /^[0-9]+$/) return 0
  run = trim($2)
  if (!(run in kind)) order[++n] = run
  kind[run] = trim($3); ops[run] = num($5); unknown[run] = num($6)
  faults[run] = num($7); check[run] = trim($8); anomalies[run] = num($9)
  return 1
}
