// Summarises a Complement run (`go test -json` output) for CI: one line per package (top-level tests
// passed / failed / skipped, subtests passed), the totals, how many of Synapse's passes (the target,
// ../shared/complement/SYNAPSE-PASSES.txt) pass here, and every test that passed here before
// (complement/passes.txt, one "package Test[/Subtest]" a line) and did not now: those fail the run.
// With --lost FILE, the top-level tests those belong to are written there ("package Test" a line), for
// run.sh to run once more: a test that passes on that second run is reported as flaky, not failed.
// Usage: node complement/summary.mjs OUTPUT.json PASSES.txt [SYNAPSE-PASSES.txt] [--write-passes FILE] [--lost FILE] [--partial]
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const valued = ["--write-passes", "--lost"];
const [outputFile, passesFile, synapseFile] = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !valued.includes(all[i - 1]));
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const writeTo = option("--write-passes");
const lostTo = option("--lost");

/** "github.com/matrix-org/complement/tests/csapi" → "csapi"; the top-level package → "tests". */
const shortPackage = (pkg) => pkg.split("/").pop();

const results = new Map(); // "pkg Test/Sub" → pass | fail | skip
const buildFailures = new Set();
for (const line of readFileSync(outputFile, "utf8").split("\n")) {
  if (!line.startsWith("{")) continue;
  let ev;
  try {
    ev = JSON.parse(line);
  } catch {
    continue;
  }
  if (!ev.Package) continue;
  const pkg = shortPackage(ev.Package);
  if (!ev.Test) {
    if (ev.Action === "fail" && ![...results.keys()].some((k) => k.startsWith(`${pkg} `))) buildFailures.add(pkg);
    continue;
  }
  if (ev.Action === "pass" || ev.Action === "fail" || ev.Action === "skip") results.set(`${pkg} ${ev.Test}`, ev.Action);
}

const readList = (file) => (file && existsSync(file) ? readFileSync(file, "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#")) : []);
const passedBefore = readList(passesFile);
const synapsePasses = readList(synapseFile);

const perPackage = new Map();
for (const [key, action] of results) {
  const [pkg, test] = [key.slice(0, key.indexOf(" ")), key.slice(key.indexOf(" ") + 1)];
  const row = perPackage.get(pkg) ?? { pass: 0, fail: 0, skip: 0, subPass: 0, subTotal: 0 };
  if (test.includes("/")) {
    row.subTotal++;
    if (action === "pass") row.subPass++;
  } else row[action]++;
  perPackage.set(pkg, row);
}

const total = { pass: 0, fail: 0, skip: 0, subPass: 0, subTotal: 0 };
for (const pkg of [...perPackage.keys()].sort()) {
  const r = perPackage.get(pkg);
  for (const k of Object.keys(total)) total[k] += r[k];
  console.log(`complement ${pkg.padEnd(8)} ${String(r.pass).padStart(4)} passed ${String(r.fail).padStart(4)} failed ${String(r.skip).padStart(4)} skipped; subtests ${r.subPass}/${r.subTotal} passed`);
}
for (const pkg of buildFailures) console.log(`complement ${pkg.padEnd(8)} did not build or run`);
console.log(`complement total: ${total.pass} passed, ${total.fail} failed, ${total.skip} skipped (top-level); subtests ${total.subPass}/${total.subTotal} passed`);

if (synapsePasses.length) {
  const here = synapsePasses.filter((t) => results.get(t) === "pass");
  const top = synapsePasses.filter((t) => !t.split(" ")[1].includes("/"));
  console.log(`complement vs Synapse's passes: ${here.length}/${synapsePasses.length} (top-level ${top.filter((t) => results.get(t) === "pass").length}/${top.length})`);
}

if (writeTo) {
  const passed = [...results].filter(([, a]) => a === "pass").map(([k]) => k).sort();
  writeFileSync(writeTo, `# Complement tests and subtests that pass on Weft (complement/summary.mjs --write-passes): CI fails if one stops passing.\n${passed.join("\n")}\n`);
  console.log(`complement: wrote ${passed.length} passes to ${writeTo}`);
}

// A partial run (--partial: a -run pattern or some packages) answers only for the tests it ran.
const partial = process.argv.includes("--partial");
const lost = passedBefore.filter((t) => results.get(t) !== "pass" && (!partial || results.has(t)));
if (lost.length) {
  console.log(`complement: ${lost.length} test(s) that passed before did not pass now:`);
  for (const t of lost) console.log(`  ${t}: ${results.get(t) ?? "not run"}`);
  if (lostTo) {
    const tops = new Set(lost.map((t) => t.split("/")[0]));
    writeFileSync(lostTo, [...tops].join("\n") + "\n");
  }
  process.exit(1);
}
if (buildFailures.size) process.exit(1);
