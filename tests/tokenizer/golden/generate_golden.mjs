// Generates ctxkit's golden token ids from the reference implementation.
//
// The reference is tiktoken@1.0.22 from npm: the WebAssembly build of
// OpenAI's Rust tiktoken core. Set it up in a scratch directory outside the
// repository (gpt-tokenizer supplies data/TestPlans.txt, MIT licence):
//
//   mkdir -p /tmp/ctxkit-npm-golden && cd /tmp/ctxkit-npm-golden &&
//   npm init -y && npm install tiktoken@1.0.22 gpt-tokenizer@4.0.0
//
// The reference of the "claude" encoding (the legacy Claude vocabulary) is
// @anthropic-ai/tokenizer@0.0.4 (Apache-2.0 per its package.json), which runs
// the same tiktoken@1.0.22 on text.normalize("NFKC"); set it up in a second
// scratch directory:
//
//   mkdir -p /tmp/ctxkit-npm-claude && cd /tmp/ctxkit-npm-claude &&
//   npm init -y && npm install @anthropic-ai/tokenizer@0.0.4 tiktoken@1.0.22
//
// then, from anywhere:
//
//   node tests/tokenizer/golden/generate_golden.mjs /tmp/ctxkit-npm-golden/node_modules \
//       --claude /tmp/ctxkit-npm-claude/node_modules
//       writes tiktoken_corpus.golden, gpt_tokenizer_testplans.golden and
//       claude_corpus.golden beside this script (or into --out DIR); without
//       --claude, claude_corpus.golden is neither written nor checked
//   add --check to recompute everything with the references and exit 0 only
//       if the committed files are byte-identical to the recomputed ones
//   add --stats to print per-encoding case and token counts and edge coverage
//
// Every text in the corpus is written literally below or generated here from
// a seeded PRNG (no Math.random, no clock, no locale), so two runs give the
// same bytes. No third-party text is used except the gpt-tokenizer test plans,
// which are converted as they are, with their licence recorded in the file.
//
// File format (read by tests/tokenizer/golden_reader.cc; see
// tests/tokenizer/golden/README.md):
//   header  "ctxkit-golden 1\n", then comment lines "# ...\n", then "\n"
//   body    varint n_encodings, n_encodings x string (encoding names)
//           varint n_texts, then per text:
//             string label, string text (UTF-8 bytes),
//             varint n_results, then per result:
//               varint encoding index, byte mode (0 = encode_ordinary,
//               1 = encode with allowed_special "all"), varint n_ids,
//               n_ids x varint id
//   trailer CRC-32 (IEEE 802.3, as zlib) of every preceding byte, 4 bytes
//           little-endian
//   varint = unsigned LEB128, minimal length; string = varint length + bytes.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const kEncodings = ['r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base'];
const kCorpusFile = 'tiktoken_corpus.golden';
const kTestPlansFile = 'gpt_tokenizer_testplans.golden';
const kClaudeFile = 'claude_corpus.golden';
const kLongRunsFile = 'long_runs.golden';
// The long-runs file holds only ordinary encodings (its texts have no
// special-token text) of the encodings whose merges differ.
const kLongRunsEncodings = ['r50k_base', 'p50k_base', 'cl100k_base', 'o200k_base'];
const kTiktokenVersion = '1.0.22';
const kGptTokenizerVersion = '4.0.0';
const kClaudeTokenizerVersion = '0.0.4';

// ---------------------------------------------------------------------------
// Command line.

function Usage() {
  console.error('usage: node generate_golden.mjs <node_modules dir> [--claude <node_modules dir>] ' +
                '[--check] [--stats] [--out DIR]');
  process.exit(2);
}

const args = process.argv.slice(2);
let nodeModules = null;
let check = false;
let stats = false;
let claudeModules = null;
let outDir = path.dirname(fileURLToPath(import.meta.url));
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--check') check = true;
  else if (args[i] === '--claude' && i + 1 < args.length) claudeModules = args[++i];
  else if (args[i] === '--stats') stats = true;
  else if (args[i] === '--out' && i + 1 < args.length) outDir = args[++i];
  else if (args[i].startsWith('--') || nodeModules !== null) Usage();
  else nodeModules = args[i];
}
if (nodeModules === null) Usage();
// Accept either node_modules itself or the directory holding it.
if (fs.existsSync(path.join(nodeModules, 'node_modules', 'tiktoken'))) {
  nodeModules = path.join(nodeModules, 'node_modules');
}
const require = createRequire(path.join(path.resolve(nodeModules), 'index.js'));

function PackageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(nodeModules, name, 'package.json'), 'utf8')).version;
}
for (const [name, want] of [['tiktoken', kTiktokenVersion], ['gpt-tokenizer', kGptTokenizerVersion]]) {
  const got = PackageVersion(name);
  if (got !== want) {
    console.error(`${name}@${got} found in ${nodeModules}, need exactly ${name}@${want}`);
    process.exit(1);
  }
}
const tiktoken = require('tiktoken');

// The Claude reference, from its own scratch directory: its tiktoken must be
// the same version.
let claudeTokenizer = null;
if (claudeModules !== null) {
  if (fs.existsSync(path.join(claudeModules, 'node_modules', '@anthropic-ai', 'tokenizer'))) {
    claudeModules = path.join(claudeModules, 'node_modules');
  }
  const claudeRequire = createRequire(path.join(path.resolve(claudeModules), 'index.js'));
  // The version of the package that `req` loads as `name` (tiktoken exports
  // no ./package.json, so walk up from its entry point).
  const VersionOf = (req, name) => {
    let dir = path.dirname(req.resolve(name));
    while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  };
  // @anthropic-ai/tokenizer requires its own tiktoken; check that one.
  const tokenizerRequire = createRequire(claudeRequire.resolve('@anthropic-ai/tokenizer'));
  for (const [req, name, want] of [[claudeRequire, '@anthropic-ai/tokenizer', kClaudeTokenizerVersion],
                                   [tokenizerRequire, 'tiktoken', kTiktokenVersion]]) {
    const got = VersionOf(req, name);
    if (got !== want) {
      console.error(`${name}@${got} found in ${claudeModules}, need exactly ${name}@${want}`);
      process.exit(1);
    }
  }
  claudeTokenizer = claudeRequire('@anthropic-ai/tokenizer');
}

// ---------------------------------------------------------------------------
// Seeded PRNG: splitmix32-style mixing of a 32-bit counter. Deterministic on
// every platform because it only uses Math.imul and 32-bit shifts.

class Rng {
  constructor(seed) { this.state = seed >>> 0; }
  Next() {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  // Uniform in [0, n) for n <= 2^32 (modulo bias is irrelevant here).
  Below(n) { return this.Next() % n; }
  Range(lo, hi) { return lo + this.Below(hi - lo + 1); }
  Pick(array) { return array[this.Below(array.length)]; }
  Bytes(n) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; ++i) b[i] = this.Next() & 0xff;
    return b;
  }
}

const cp = (...codes) => String.fromCodePoint(...codes);

// ---------------------------------------------------------------------------
// The corpus: [label, text] pairs. Labels are "section/name"; they are unique.

function BuildCorpus() {
  const cases = [];
  const Add = (label, text) => cases.push([label, text]);

  // --- English prose (written for this file).
  const prose = [
    'hello world',
    'Hello, World!',
    'The quick brown fox jumps over the lazy dog.',
    'A context window is a budget: every message, summary and tool result spends tokens from it.',
    'When the history grows too long, the agent keeps the recent turns verbatim and replaces older ones with short summaries.',
    "It's 5 o'clock somewhere; we'll meet at the café at 17:30, won't we?",
    'Mr. Smith paid $1,234.56 (plus 7.5% tax) on 2024-03-15 -- twice!',
    '   Leading spaces, trailing spaces.   ',
    'ALL CAPS SENTENCE WITH SOME Mixed Case words AND numbers 42.',
    'Tabs\tbetween\twords\tand a newline at the end\n',
    'Line one.\nLine two.\n\nParagraph two, after a blank line.\n',
    'Quotes: "double", \'single\', `backticks`, “curly”, ‘curly single’, «guillemets».',
    'Dashes: en – em — minus − hyphen-ated; ellipsis… and three dots...',
    'e.g. i.e. etc. vs. a.m. p.m. U.S.A. Ph.D.',
    'One sentence.  Two spaces after the period.   Three here.',
  ];
  prose.forEach((t, i) => Add(`prose/${i}`, t));
  Add('prose/paragraph',
      'Tokenizers split text into pieces before merging bytes. A pre-tokenizer decides where words, ' +
      'numbers and punctuation begin and end; the byte-pair merges then join the bytes of each piece ' +
      'in rank order. Two implementations agree only if both steps agree exactly, including on ' +
      "whitespace, apostrophes, digits and characters outside ASCII. That is why this corpus exists.\n");

  // --- Code in several languages (written for this file).
  Add('code/c', '#include <stdio.h>\n\nint main(int argc, char** argv) {\n  for (int i = 0; i < argc; ++i) {\n' +
      '    printf("%d: %s\\n", i, argv[i]);\n  }\n  return 0;  // done\n}\n');
  Add('code/cpp', 'template <typename T>\nstd::vector<T> Twice(const std::vector<T>& v) {\n' +
      '  std::vector<T> out;\n  out.reserve(v.size() * 2);\n  for (const T& x : v) { out.push_back(x); out.push_back(x); }\n' +
      '  return out;\n}\n');
  Add('code/python', 'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n    a, b = 0, 1\n' +
      '    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n\nif __name__ == "__main__":\n' +
      "    print(f'{fib(30)=}')\n");
  Add('code/python-tabs', 'class Node:\n\tdef __init__(self, value):\n\t\tself.value = value\n\t\tself.next = None\n\r\n');
  Add('code/js', "const sum = (xs) => xs.reduce((a, b) => a + b, 0);\nexport async function load(url) {\n" +
      "  const res = await fetch(url, { headers: { 'Accept': 'application/json' } });\n" +
      "  if (!res.ok) throw new Error(`HTTP ${res.status}`);\n  return res.json();\n}\n");
  Add('code/rust', 'use std::collections::HashMap;\n\nfn count(words: &[&str]) -> HashMap<&str, usize> {\n' +
      '    let mut m = HashMap::new();\n    for w in words {\n        *m.entry(*w).or_insert(0) += 1;\n    }\n    m\n}\n' +
      "fn main() { let s: &'static str = \"x\"; println!(\"{:?}\", count(&[s])); }\n");
  Add('code/go', 'package main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\nfunc main() {\n' +
      '\tparts := strings.Split("a,b,c", ",")\n\tfor i, p := range parts {\n\t\tfmt.Printf("%d=%q\\n", i, p)\n\t}\n}\n');
  Add('code/shell', '#!/bin/sh\nset -eu\nfor f in "$@"; do\n  if [ -f "$f" ]; then\n' +
      '    wc -l -- "$f" | awk \'{print $1}\' >> /tmp/counts.txt 2>&1\n  fi\ndone\n' +
      'echo "done: $(date +%s)" && exit 0\n');
  Add('code/sql', "SELECT id, name FROM users WHERE created_at >= '2024-01-01' AND name LIKE 'A%' ORDER BY id DESC LIMIT 10;\n");
  Add('code/html', '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>T</title></head>\n' +
      '<body>\n  <p class="x">Hi &amp; bye &lt;3</p>\n  <!-- comment -->\n</body>\n</html>\n');
  Add('code/regex', String.raw`^(?:[a-z0-9!#$%&'*+/=?^_{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_{|}~-]+)*)@\d{1,3}\s*$`);
  Add('code/diff', '--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,4 @@\n int a;\n-int b;\n+int b = 1;\n+int c;\n \n');
  Add('code/markdown', '# Title\n\n* item one\n* item **two**\n\n```cpp\nint x = 0;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
  Add('code/crlf-c', 'int f(void)\r\n{\r\n\treturn 1;\r\n}\r\n');

  // --- JSON, generated with the PRNG and printed in several styles.
  {
    const rng = new Rng(0x15011);
    const Value = (depth) => {
      const kind = depth > 3 ? rng.Below(4) : rng.Below(7);
      switch (kind) {
        case 0: return rng.Range(-100000, 100000);
        case 1: return rng.Below(2) === 0;
        case 2: return null;
        case 3: return rng.Pick(['alpha', 'beta gamma', 'line\nbreak', 'tab\there', 'quote "q"', 'é ü 中文 🙂', '']);
        case 4: return rng.Range(0, 1000000) / 1000;
        case 5: { const a = []; for (let i = rng.Range(0, 4); i > 0; --i) a.push(Value(depth + 1)); return a; }
        default: {
          const o = {};
          for (let i = rng.Range(1, 4); i > 0; --i) o[rng.Pick(['id', 'name', 'role', 'content', 'tokens', 'meta', 'x_y', 'schema_version'])] = Value(depth + 1);
          return o;
        }
      }
    };
    for (let i = 0; i < 6; ++i) {
      const v = { messages: [Value(0), Value(1)], n: i };
      Add(`json/${i}/compact`, JSON.stringify(v));
      Add(`json/${i}/indent2`, JSON.stringify(v, null, 2));
      Add(`json/${i}/tabs`, JSON.stringify(v, null, '\t') + '\n');
    }
    Add('json/escapes', '{"a":"\\u00e9\\ud83d\\ude00\\n\\t\\\\\\"","b":[1e10,-0.5E-3,0],"c":{}}');
  }

  // --- CJK, written for this file.
  Add('cjk/chinese', '上下文窗口是一种预算：每条消息都会消耗令牌。我们把旧的对话压缩成摘要。');
  Add('cjk/chinese-mixed', '使用C++20编写的库，支持UTF-8文本，版本1.2.3，共有42个测试。');
  Add('cjk/japanese', 'これは日本語の文章です。カタカナ、ひらがな、漢字が混ざっています。ｶﾀｶﾅ（半角）も。');
  Add('cjk/korean', '안녕하세요. 토큰화는 텍스트를 작은 조각으로 나눕니다. 한국어 문장입니다!');
  Add('cjk/korean-jamo', '\u1100\u1161\u11a8 \u1112\u1161\u11ab');  // decomposed Hangul
  Add('cjk/fullwidth', 'ＡＢＣ　ｄｅｆ　１２３！？');
  Add('cjk/ext-b', cp(0x20000, 0x20001, 0x2a6d6, 0x30000) + '字');

  // --- Emoji: ZWJ sequences, flags, skin tones, keycaps, variation selectors.
  Add('emoji/basic', '🙂😀😂🤖🚀🎉❤️✅🔥');
  Add('emoji/zwj-family', '👨‍👩‍👧‍👦 👩‍❤️‍💋‍👨 🧑‍💻 🏳️‍🌈 🏴‍☠️');
  Add('emoji/flags', '🇯🇵🇺🇸🇫🇷🇩🇪🇧🇷 🏴󠁧󠁢󠁳󠁣󠁴󠁿 🇦');
  Add('emoji/skin-tones', '👍🏻👍🏼👍🏽👍🏾👍🏿 👋🏽 🧑🏿‍🦱');
  Add('emoji/keycaps', '1️⃣2️⃣#️⃣*️⃣ ©️ ®️ ™️ ↔︎');
  Add('emoji/in-text', 'Great job 👍 on the release 🚀!! See you at 10:00 ⏰.');
  Add('emoji/after-letters', 'abc🙂def 123🙂456 🙂🙂🙂 a🇯🇵b');

  // --- Right-to-left and Indic scripts (written for this file).
  Add('rtl/arabic', 'مرحبا بالعالم! هذا نص عربي قصير، مع أرقام ١٢٣ و 456.');
  Add('rtl/arabic-diacritics', 'اَلْعَرَبِيَّةُ لُغَةٌ جَمِيلَةٌ');
  Add('rtl/hebrew', 'שלום עולם! זהו טקסט קצר בעברית עם ניקוד: שָׁלוֹם.');
  Add('rtl/mixed-bidi', 'English then עברית then العربية then 123 \u200f\u200e end');
  Add('indic/hindi', 'नमस्ते दुनिया! यह हिंदी में एक छोटा वाक्य है। अंक: १२३४।');
  Add('indic/devanagari-conjuncts', 'क्ष त्र ज्ञ श्र द्ध ह्म क़ ख़ ग़');
  Add('thai/sentence', 'สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่างระหว่างคำ ตัวเลข ๑๒๓');
  Add('other/cyrillic', 'Привет, мир! Ёлка, щука, ЪЬ.');
  Add('other/greek', 'Καλημέρα κόσμε· ΣΊΣΥΦΟΣ σίσυφος ς.');
  Add('other/latin-ext', 'Straße ÆØÅ æøå Łódź İstanbul ıi ǅ ǈ ǋ ﬁ ﬂ');

  // --- Combining marks: decomposed accents, stacks, marks after non-letters.
  Add('marks/decomposed', 'cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030a E\u0300');
  Add('marks/precomposed', 'café naïve résumé Å È');
  Add('marks/at-start', '\u0301abc');
  Add('marks/after-space', 'a \u0301b \u0308\u0308');
  Add('marks/after-digit', '1\u0301 2\u20e3 3\u0338');
  Add('marks/after-punct', '!\u0301? .\u0323');
  Add('marks/alone', '\u0300\u0301\u0302');
  {
    const rng = new Rng(0x2a160);
    for (let i = 0; i < 6; ++i) {
      let s = '';
      for (const base of 'zalgo text') {
        s += base;
        for (let k = rng.Range(0, 12); k > 0; --k) s += cp(rng.Range(0x300, 0x36f));
      }
      Add(`marks/zalgo-${i}`, s);
    }
  }
  Add('marks/enclosing', 'a\u20dd b\u20de \u20e3');

  // --- Whitespace: runs of spaces, tabs, newlines, with and without text after.
  for (const n of [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 64, 100]) {
    Add(`ws/spaces-${n}`, ' '.repeat(n));
    Add(`ws/spaces-${n}-text`, ' '.repeat(n) + 'x');
    Add(`ws/text-spaces-${n}-text`, 'x' + ' '.repeat(n) + 'y');
  }
  for (const n of [1, 2, 3, 5, 9]) {
    Add(`ws/tabs-${n}`, '\t'.repeat(n));
    Add(`ws/tabs-${n}-text`, '\t'.repeat(n) + 'x');
    Add(`ws/newlines-${n}`, '\n'.repeat(n));
    Add(`ws/newlines-${n}-text`, '\n'.repeat(n) + 'x');
    Add(`ws/text-newlines-${n}`, 'x' + '\n'.repeat(n));
    Add(`ws/crlf-${n}`, '\r\n'.repeat(n));
    Add(`ws/crlf-${n}-text`, 'a' + '\r\n'.repeat(n) + 'b');
    Add(`ws/cr-${n}`, 'a' + '\r'.repeat(n) + 'b');
    Add(`ws/spaces-newline-${n}`, 'x' + ' '.repeat(n) + '\n' + ' '.repeat(n) + 'y');
  }
  Add('ws/mixed-1', ' \t \n \r\n\t\tx\n');
  Add('ws/mixed-2', 'a\n \n \nb  \n\n  c\t\n');
  Add('ws/lone-cr', 'one\rtwo\r\rthree\r');
  Add('ws/cr-lf-mix', 'a\r\n\nb\n\r\nc\r\r\nd\n\r');
  Add('ws/indent-code', 'if x:\n    y\n        z\n    \n\tw\n');
  Add('ws/vt-ff', 'a\x0bb\x0cc\x0b\x0c d');
  Add('ws/nel', 'a\u0085b \u0085 c\u0085\u0085');
  Add('ws/bom', '\ufeffhello \ufeff world\ufeff');
  Add('ws/nbsp', 'a\u00a0b \u00a0 c\u00a0\u00a0d 100\u00a0km');
  Add('ws/ideographic-space', '日本\u3000語\u3000\u3000x \u3000');
  Add('ws/unicode-spaces', 'a\u1680b\u2000c\u2001d\u2002e\u2003f\u2009g\u200ah\u202fi\u205fj');
  Add('ws/line-para-sep', 'a\u2028b\u2029c \u2028\n');
  Add('ws/zero-width', 'a\u200bb\u200cc\u200dd\u2060e');
  Add('ws/separators-1c-1f', 'a\x1cb\x1dc\x1ed\x1fe');
  // Every string of length 1..3 over a small alphabet: the end-of-text and
  // lookahead rules of the patterns (\s+(?!\S), \s*[\r\n]+) hinge on these.
  {
    const alphabet = [' ', '\t', '\n', '\r', 'a', '1', '.', '\u00a0', "'"];
    const names = ['sp', 'tab', 'lf', 'cr', 'a', '1', 'dot', 'nbsp', 'apos'];
    const Rec = (prefix, label, depth) => {
      if (depth > 0) Add(`ws-combo/${label}`, prefix);
      if (depth === 3) return;
      alphabet.forEach((c, i) => Rec(prefix + c, depth === 0 ? names[i] : `${label}+${names[i]}`, depth + 1));
    };
    Rec('', '', 0);
  }

  // --- Control characters, noncharacters, private use, replacement char.
  Add('controls/c0', Array.from({ length: 32 }, (_, i) => cp(i)).join('') + '\x7f');
  Add('controls/nul-in-text', 'a\x00b\x00\x00c');
  Add('controls/c1', Array.from({ length: 32 }, (_, i) => cp(0x80 + i)).join(''));
  Add('controls/specials', '\ufffd \ufffe \uffff ' + cp(0x10ffff, 0xe000, 0xf8ff, 0xf0000) + ' \u00ad soft\u00adhyphen');

  // --- Digits and numbers.
  for (const n of [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 20, 31, 50, 100]) {
    let s = '';
    for (let i = 0; i < n; ++i) s += String((i * 7 + 3) % 10);
    Add(`digits/run-${n}`, s);
    Add(`digits/run-${n}-in-text`, `x${s}y ${s}.`);
  }
  Add('digits/numbers', '1,234,567.89 1.234.567,89 1 000 000 1_000_000 1\u202f000 12\'345 1e-10 6.02E+23 -42 +7 0x1F 0b1010 0o17 3/4 50% #1 v2.0.1');
  Add('digits/other-scripts', '١٢٣٤٥ ۱۲۳ १२३ ১২৩ ๑๒๓ ０１２３ ²³¹ ½ ¾ Ⅻ ⅻ ① ⑳ 𝟘𝟙𝟚');
  Add('digits/dates-times', '2024-12-31T23:59:59.999Z 12/31/2024 31.12.2024 23:59 11:59pm');
  Add('digits/phone-ip', '+1 (555) 123-4567 192.168.0.1 ::1 fe80::1%eth0 10.0.0.0/8');
  Add('digits/letters-digits', 'abc123def 123abc a1b2c3 H2O CO2 x86_64 utf8 i18n');

  // --- Contractions in every case: the patterns match them case-insensitively
  // (cl100k, o200k) or case-sensitively (r50k, p50k); Unicode simple case
  // folding makes U+017F (long s) match 's' and U+212A (Kelvin) match 'k'.
  {
    const suffixes = ['s', 't', 're', 've', 'm', 'll', 'd'];
    for (const suf of suffixes) {
      const variants = [];
      for (let mask = 0; mask < (1 << suf.length); ++mask) {
        let v = '';
        for (let i = 0; i < suf.length; ++i) v += (mask >> i) & 1 ? suf[i].toUpperCase() : suf[i];
        variants.push(v);
      }
      Add(`contraction/${suf}`, variants.map((v) => `it'${v} IT'${v} '${v} x'${v}y 1'${v} '${v}'${v}`).join(' '));
      for (const v of variants) Add(`contraction/${suf}/${v}`, `'${v}`);
    }
    Add('contraction/long-s', "it'ſ IT'ſ 'ſ x'ſy 'ſt ſ'ſ");
    Add('contraction/kelvin', "it'\u212a \u212aelvin 5\u212a '\u212a x'\u212ay \u212a's");
    Add('contraction/typographic', 'it’s don’t we’re they’ve I’m you’ll he’d ʼs');
    Add('contraction/words', "don't DON'T Don'T doN't we'Re THEY'VE i'M I'm you'LL He'D she'd can't won't y'all rock'n'roll");
    Add('contraction/edge', "'' ''' 's's 'ss 'tt 'res 'vee 'mm 'lll 'dd ' s ' t 'x '1 '\n's\n");
    Add('contraction/after-nonascii', "é's 中's 🙂's ١'s Ω'S ß'T");
    Add('contraction/dotted-i', "'İ 'ı İ's ı'S");
  }

  // --- Punctuation runs, slashes, followed by newlines.
  {
    const runs = ['//', '/*', '*/', '...', '!!!', '?!', '---', '===', '###', '>>>', '<!--', '-->', '::', ';;',
      '()', '[]', '{}', '<>', '\\\\', '||', '&&', '$$', '%%', '@@', '~~', '^^', '``', '"""', "'''", '.,;:', '/'];
    const tails = ['', '\n', '\n\n', '\r\n', '\r', ' \n', '\nx', '\n\n  x', 'x'];
    runs.forEach((r, i) => tails.forEach((t, j) => Add(`punct/${i}-${j}`, r + t)));
  }
  Add('punct/slash-paths', '/usr/local/bin/ C:\\Users\\me\\file.txt ../a/./b// \\\\server\\share\n');
  Add('punct/unicode', '¡¿ ‽ § ¶ † ‡ • ‣ ※ ⁂ 〈〉 「」 『』 【】 、。 ，！ ◆ ★ → ⇒ ∀∃ ∑ ≤≥ ≠ ∞');
  Add('punct/space-before', 'a !b ?c\n.d \n!\n ?\n\n');

  // --- Special-token text embedded in ordinary text.
  {
    const specials = ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|endofprompt|>',
      '<|im_start|>', '<|im_end|>', '<|im_sep|>', '<|startoftext|>', '<|return|>', '<|constrain|>',
      '<|channel|>', '<|start|>', '<|end|>', '<|message|>', '<|call|>'];
    specials.forEach((s, i) => {
      Add(`special/${i}/alone`, s);
      Add(`special/${i}/in-text`, `Hello${s}world ${s} end`);
      Add(`special/${i}/lines`, `${s}\n${s}${s}\n\n ${s}`);
    });
    Add('special/chat', '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n');
    Add('special/fim', '<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n    return y<|fim_middle|>');
    Add('special/partial', '<|endoftext <|endoftext| endoftext|> <|endoftext|> <||> <| |> <<|endoftext|>> |<|endoftext|>|');
    Add('special/case', '<|ENDOFTEXT|> <|EndOfText|> < |endoftext| >');
    Add('special/adjacent', '<|endoftext|><|endofprompt|><|fim_prefix|><|fim_middle|><|fim_suffix|>');
  }

  // --- Long words.
  {
    const rng = new Rng(0x10a6);
    const lower = 'abcdefghijklmnopqrstuvwxyz';
    const Word = (n, alpha) => { let s = ''; for (let i = 0; i < n; ++i) s += alpha[rng.Below(alpha.length)]; return s; };
    Add('long/lower-300', Word(300, lower));
    Add('long/mixed-case-400', Word(400, lower + lower.toUpperCase()));
    Add('long/camel-250', Array.from({ length: 25 }, () => { const w = Word(rng.Range(3, 12), lower); return w[0].toUpperCase() + w.slice(1); }).join(''));
    Add('long/cyrillic-200', Word(200, 'абвгдежзийклмнопрстуфхцчшщъыьэюя'));
    Add('long/cjk-200', Word(200, '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年'));
    Add('long/accented-200', Word(200, 'éèêëàâäôöûüçñ'));
    Add('long/snake-case', Array.from({ length: 30 }, () => Word(rng.Range(2, 8), lower)).join('_'));
    Add('long/devanagari-150', Word(150, 'कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह'));
    Add('long/hex-256', Word(256, '0123456789abcdef'));
  }

  // --- Base64 blobs and URLs.
  {
    const rng = new Rng(0xb64);
    for (const n of [3, 10, 57, 200, 700]) {
      const b = rng.Bytes(n);
      Add(`base64/std-${n}`, b.toString('base64'));
      Add(`base64/url-${n}`, b.toString('base64url'));
    }
    const wrapped = rng.Bytes(400).toString('base64').replace(/.{76}/g, '$&\n');
    Add('base64/wrapped-mime', 'Content-Transfer-Encoding: base64\r\n\r\n' + wrapped.replace(/\n/g, '\r\n'));
    Add('base64/data-uri', 'data:image/png;base64,' + rng.Bytes(120).toString('base64'));
  }
  Add('url/simple', 'https://example.com/ http://example.org/path/to/page.html');
  Add('url/query', 'https://example.com/search?q=token+count&lang=en-US&page=2#results');
  Add('url/encoded', 'https://example.com/a%20b/%E4%B8%AD%E6%96%87?x=%26%3D&y=caf%C3%A9');
  Add('url/idn', 'https://münchen.example/straße https://例子.测试/路径');
  Add('url/misc', 'mailto:someone@example.com ftp://user:pw@host:2121/dir file:///etc/hosts ssh://git@example.com:22/x.git');
  Add('url/in-markdown', 'See [the docs](https://example.com/docs/v1.2/index.html?ref=readme) and <https://example.net>.\n');

  // --- Repeated characters (classic BPE worst cases), a few KB in total.
  Add('repeat/a-2000', 'a'.repeat(2000));
  Add('repeat/space-1000', ' '.repeat(1000));
  Add('repeat/newline-500', '\n'.repeat(500));
  Add('repeat/zero-1500', '0'.repeat(1500));
  Add('repeat/bang-1000', '!'.repeat(1000));
  Add('repeat/ab-600', 'ab'.repeat(600));
  Add('repeat/emoji-200', '🙂'.repeat(200));
  Add('repeat/e-acute-300', 'é'.repeat(300));
  Add('repeat/han-300', '日'.repeat(300));
  Add('repeat/tab-300', '\t'.repeat(300));
  Add('repeat/crlf-300', '\r\n'.repeat(300));
  Add('repeat/space-x-300', ' x'.repeat(300));
  Add('repeat/equals-800', '='.repeat(800) + '\n');

  // --- Code points whose properties changed or were assigned in Unicode
  // 13..16; a mismatch here points at a Unicode version difference between
  // ctxkit's tables and the reference's regex engine, not at the BPE.
  Add('unicode-version/14', cp(0x1fae0, 0x1fae8) + ' ' + cp(0x0870, 0x0871) + ' ' + cp(0x1e290, 0x1e291));
  Add('unicode-version/15', cp(0x1fa75, 0x1f6dc) + ' ' + cp(0x11f00, 0x11f04) + ' ' + cp(0x1e4d0, 0x1e4d1));
  Add('unicode-version/16', cp(0x1c89, 0x1c8a) + ' ' + cp(0x105c0, 0x105c1) + ' ' + cp(0x1fac6, 0x1fadc));
  Add('unicode-version/unassigned', cp(0x0378, 0x0379) + 'a' + cp(0x2fffd, 0xe0080) + '1');
  Add('unicode-version/math-letters', '𝐀𝐁𝐂 𝑎𝑏𝑐 𝔄𝔅 𝕏 ℝℕℤ ℓ ℮');

  // --- Random strings over a mixed alphabet.
  {
    const rng = new Rng(0xc7c7c7);
    const pieces = [
      'a', 'b', 'z', 'E', 'Q', 'é', 'ß', 'Ω', 'ж', 'ſ', '\u212a', 'İ', 'ı',
      '0', '1', '7', '٣', '४', '½', '²',
      ' ', ' ', ' ', '  ', '\t', '\n', '\n', '\r', '\r\n', '\u0085', '\u00a0', '\u3000', '\ufeff', '\u200d', '\u2028',
      "'", "'s", "'T", "'re", "'LL", "'ve", "'d", "'m", '’',
      '.', ',', '!', '?', '/', '\\', '-', '_', '(', ')', '{', '}', '"', '#', '<', '>', '|', '@', '$', '%', '*', '=', '+', ':', ';',
      '中', '文', 'の', 'カ', '한', '글',
      '🙂', '👍🏽', '👨‍👩‍👧', '🇯🇵', '\u0301', '\u0308', '\u20e3',
      'ع', 'ש', 'न', '्', 'ก', 'ั',
      '<|', '|>', '<|endoftext|>', '<|fim_middle|>', 'endoftext', '\x00', '\x1f',
    ];
    for (let i = 0; i < 300; ++i) {
      let s = '';
      for (let n = rng.Range(1, 40); n > 0; --n) s += rng.Pick(pieces);
      Add(`random/short-${i}`, s);
    }
    for (let i = 0; i < 12; ++i) {
      let s = '';
      for (let n = rng.Range(200, 800); n > 0; --n) s += rng.Pick(pieces);
      Add(`random/long-${i}`, s);
    }
    // Random text that looks like words: letters, apostrophes, spaces, digits.
    const wordy = ['the', 'a', 'of', 'token', 'count', "'s", "'t", ' ', ' ', ' ', '  ', '\n', ',', '.', '42', '1999', 'éa', 'Ab', 'XYZ', '-', '_'];
    for (let i = 0; i < 40; ++i) {
      let s = '';
      for (let n = rng.Range(5, 60); n > 0; --n) s += rng.Pick(wordy);
      Add(`random/wordy-${i}`, s);
    }
  }

  Add('edge/empty', '');
  Add('edge/single-space', ' ');
  Add('edge/single-newline', '\n');
  Add('edge/single-byte-tokens', 'a b c ~ ` ^');

  // Sanity: unique labels, well-formed UTF-16 (a lone surrogate would be
  // replaced by U+FFFD on the way into WebAssembly, and the bytes we record
  // would not be what tiktoken saw).
  const seen = new Set();
  for (const [label, text] of cases) {
    if (seen.has(label)) throw new Error(`duplicate label ${label}`);
    seen.add(label);
    if (!text.isWellFormed()) throw new Error(`ill-formed text in ${label}`);
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Gold file writer.

const kCrcTable = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; ++n) {
    let c = n;
    for (let k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function Crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; ++i) c = kCrcTable[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

class Writer {
  constructor() { this.chunks = []; this.bytes = []; }
  Flush() { if (this.bytes.length) { this.chunks.push(Buffer.from(this.bytes)); this.bytes = []; } }
  Raw(buf) { this.Flush(); this.chunks.push(Buffer.from(buf)); }
  Byte(b) { this.bytes.push(b); if (this.bytes.length > 65536) this.Flush(); }
  Varint(v) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`bad varint ${v}`);
    while (v >= 0x80) { this.Byte((v & 0x7f) | 0x80); v = Math.floor(v / 128); }
    this.Byte(v);
  }
  String(s) { const b = Buffer.from(s, 'utf8'); this.Varint(b.length); this.Flush(); this.chunks.push(b); }
  Finish() { this.Flush(); return Buffer.concat(this.chunks); }
}

// records: [{label, text, results: [{encoding, mode, ids}]}]
function Serialize(comments, records, encodings = kEncodings) {
  for (const c of comments) {
    if (c.includes('\n')) throw new Error('comment with newline');
  }
  const w = new Writer();
  w.Raw(Buffer.from('ctxkit-golden 1\n' + comments.map((c) => `# ${c}\n`).join('') + '\n', 'utf8'));
  w.Varint(encodings.length);
  for (const e of encodings) w.String(e);
  w.Varint(records.length);
  for (const r of records) {
    w.String(r.label);
    w.String(r.text);
    w.Varint(r.results.length);
    for (const res of r.results) {
      w.Varint(encodings.indexOf(res.encoding));
      w.Byte(res.mode);
      w.Varint(res.ids.length);
      for (const id of res.ids) w.Varint(id);
    }
  }
  const body = w.Finish();
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32LE(Crc32(body));
  return Buffer.concat([body, trailer]);
}

// ---------------------------------------------------------------------------
// Building the two files.

const encoders = Object.fromEntries(kEncodings.map((e) => [e, tiktoken.get_encoding(e)]));
let harmonySupported = true;
try { tiktoken.get_encoding('o200k_harmony').free(); } catch { harmonySupported = false; }

function BuildCorpusFile() {
  const records = BuildCorpus().map(([label, text]) => ({
    label,
    text,
    results: kEncodings.flatMap((e) => [
      { encoding: e, mode: 0, ids: Array.from(encoders[e].encode_ordinary(text)) },
      { encoding: e, mode: 1, ids: Array.from(encoders[e].encode(text, 'all')) },
    ]),
  }));
  const comments = [
    'Golden token ids for ctxkit\'s tokenizer parity tests.',
    `Reference: npm tiktoken@${kTiktokenVersion} (WebAssembly build of OpenAI's Rust tiktoken core, MIT licence).`,
    'mode 0 = encode_ordinary(text); mode 1 = encode(text, allowed_special="all").',
    'Texts are written or generated (seeded PRNG) by generate_golden.mjs; regenerate or verify with it.',
  ];
  return { bytes: Serialize(comments, records), records };
}

// Long pieces of whitespace, punctuation and repeated characters, shapes
// known to be slow to merge (which ctxkit merges by segments): mixed whitespace with both line ends and indentation, blank
// CRLF lines, "-=" rules, one CJK character repeated, spaces and newlines,
// punctuation, periodic and random mixes of such units, and indented prose.
// Each is 0.3 to 4 KB, so that pieces run far past the 128 bytes where the
// long-piece merger starts, yet the file stays small.
function BuildLongRuns() {
  const cases = [];
  const Add = (label, text) => cases.push([`long-runs/${label}`, text]);
  const rng = new Rng(0x13151315);
  const repeat = (unit, bytes) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit))));
  for (const bytes of [1024, 4096]) {
    let ws = '';
    while (ws.length < bytes) {
      const k = rng.Below(6);
      ws += k === 0 ? ' '.repeat(rng.Range(1, 12)) : k === 1 ? '\t'.repeat(rng.Range(1, 3)) : k === 2 ? '\r\n' : '\n'.repeat(rng.Range(1, 2));
    }
    Add(`whitespace-mix-${bytes}`, ws);
    let nl = '';
    for (let i = 0; i < bytes; ++i) nl += rng.Below(4) === 0 ? '\n' : ' ';
    Add(`newlines-spaces-${bytes}`, nl);
  }
  Add('crlf-blank', repeat('\r\n', 2000));
  Add('crlf-blank-with-blanks', repeat('  \r\n\r\n\t\r\n', 2000));
  Add('dash-equals', repeat('-=', 3000));
  Add('equals-dash-odd', '=' + repeat('-=', 1501));
  Add('dash-equals-lines', repeat('-='.repeat(40) + '\n', 2000));
  Add('cjk-repeat', repeat('\u7684', 3000));
  Add('cjk-pair-repeat', repeat('\u65e5\u672c', 3000));
  Add('cjk-full-stop-repeat', repeat('\u3002', 1500));
  {
    const punct = '-=*#~_.:;!?/+()[]{}&%$@^`\'",\\>';
    let p = '';
    for (let i = 0; i < 2048; ++i) p += punct[rng.Below(punct.length)];
    Add('punct-mix', p);
  }
  {
    const units = [' ', '\n', '\r\n', '\t', '  ', '    ', '-=', '=', '-', '*', '#', '~', '.', '!?', '//',
                   '\u7684', '\u65e5', '\u3002', '\u{1F642}', '_', '{}', '"'];
    for (let i = 0; i < 16; ++i) {
      const kinds = [];
      for (let k = rng.Range(1, 4); k > 0; --k) kinds.push(rng.Pick(units));
      const bytes = rng.Range(300, 2500);
      let t = '';
      while (Buffer.byteLength(t) < bytes) {
        const unit = rng.Pick(kinds);
        t += unit.repeat(rng.Range(1, rng.Below(8) === 0 ? 300 : 6));
      }
      Add(`units-${i}`, t);
    }
  }
  {
    // Indented prose: paragraphs, tab- and space-indented quotations and
    // code, blank lines holding blanks, a CRLF section.
    const words = ['the', 'context', 'window', 'of', 'an', 'agent', 'keeps', 'what', 'it', 'needs,', 'and', 'drops', 'the', 'rest.', 'Tokens', 'are', 'counted', 'exactly;', 'it\'s', '42', 'times', '(often)'];
    let t = '';
    for (let para = 0; para < 30; ++para) {
      const eol = para % 7 === 3 ? '\r\n' : '\n';
      const indent = rng.Pick(['', '', '\t', '    ', '        ', '\t\t', '  - ', '\t* ']);
      for (let line = rng.Range(1, 5); line > 0; --line) {
        let l = indent;
        for (let w = rng.Range(4, 12); w > 0; --w) l += rng.Pick(words) + (rng.Below(9) === 0 ? '  ' : ' ');
        t += l.trimEnd() + (rng.Below(5) === 0 ? '   ' : '') + eol;
      }
      t += rng.Pick(['', '  ', '\t', '    ']) + eol + (rng.Below(3) === 0 ? eol : '');
    }
    Add('prose-indented', t);
  }
  {
    // The benchmark's random mixes at 8 KB (bench/tokenizer_inputs.cc,
    // other seeds): whitespace-only runs that never repeat for long, which
    // ctxkit merges by its left-to-right search over symbol tokens rather
    // than by segments, and random punctuation and symbol mixes.
    const more = new Rng(0x13161316);
    const bytes = 8192;
    let ws = '';
    while (ws.length < bytes) {
      const k = more.Below(6);
      ws += k === 0 ? ' '.repeat(more.Range(1, 12)) : k === 1 ? '\t'.repeat(more.Range(1, 3)) : k === 2 ? '\r\n' : '\n'.repeat(more.Range(1, 2));
    }
    Add(`whitespace-mix-${bytes}`, ws.slice(0, bytes));
    let nl = '';
    for (let i = 0; i < bytes; ++i) nl += more.Below(4) === 0 ? '\n' : ' ';
    Add(`newlines-spaces-${bytes}`, nl);
    const punct = '-=*#~_.:;!?/+()[]{}&%$@^`\'",\\>';
    let p = '';
    for (let i = 0; i < bytes; ++i) p += punct[more.Below(punct.length)];
    Add(`punct-mix-${bytes}`, p);
    // A few symbols at random, as in a rule drawn by hand or ASCII art.
    const symbols = ' \t\n\r-=*#~_.:;!?/+()[]{}&%$@^`\'",\\>|';
    for (let i = 0; i < 4; ++i) {
      let alphabet = '';
      for (let k = more.Range(2, 6); k > 0; --k) alphabet += more.Pick([...symbols]);
      let t = '';
      for (let j = 0; j < 2048; ++j) t += alphabet[more.Below(alphabet.length)];
      Add(`symbols-${i}`, t);
    }
  }
  return cases;
}

function BuildLongRunsFile() {
  const records = BuildLongRuns().map(([label, text]) => ({
    label,
    text,
    results: kLongRunsEncodings.map((e) => ({ encoding: e, mode: 0, ids: Array.from(encoders[e].encode_ordinary(text)) })),
  }));
  const comments = [
    'Golden token ids of long runs of whitespace, punctuation and repeated characters, for ctxkit\'s parity tests.',
    `Reference: npm tiktoken@${kTiktokenVersion} (WebAssembly build of OpenAI's Rust tiktoken core, MIT licence).`,
    'mode 0 = encode_ordinary(text) only: the texts hold no special-token text.',
    'Texts are generated (seeded PRNG) by generate_golden.mjs; regenerate or verify with it.',
  ];
  return { bytes: Serialize(comments, records, kLongRunsEncodings), records };
}

function BuildTestPlansFile() {
  const file = path.join(nodeModules, 'gpt-tokenizer', 'data', 'TestPlans.txt');
  const data = fs.readFileSync(file, 'utf8');
  const records = [];
  const mismatches = [];
  // The same parsing rules as gpt-tokenizer's own test (GptEncoding.test.ts):
  // blocks separated by blank lines, "Sample: " keeps everything after the
  // first ": " (so samples never contain newlines).
  for (const block of data.split('\n\n')) {
    const [nameLine, sampleLine, encodedLine] = block.split('\n');
    if (!nameLine || !sampleLine || !encodedLine) continue;
    const encoding = nameLine.split(': ')[1];
    const text = sampleLine.split(': ').slice(1).join(': ');
    const ids = JSON.parse(encodedLine.split(': ')[1]);
    if (!kEncodings.includes(encoding)) throw new Error(`unknown encoding ${encoding} in TestPlans.txt`);
    const index = records.filter((r) => r.results[0].encoding === encoding).length;
    // The test plans hold no special-token text; they are encode_ordinary
    // vectors, checked here against the reference.
    const ref = Array.from(encoders[encoding].encode_ordinary(text));
    if (ref.length !== ids.length || ref.some((v, i) => v !== ids[i])) mismatches.push(`${encoding}#${index}`);
    records.push({ label: `testplans/${encoding}/${index}`, text, results: [{ encoding, mode: 0, ids }] });
  }
  const licence = fs.readFileSync(path.join(nodeModules, 'gpt-tokenizer', 'LICENSE'), 'utf8').trimEnd().split('\n');
  const comments = [
    `Converted from data/TestPlans.txt of npm gpt-tokenizer@${kGptTokenizerVersion} by generate_golden.mjs.`,
    'Each vector is mode 0 (encode_ordinary); the ids are gpt-tokenizer\'s, checked equal to',
    `npm tiktoken@${kTiktokenVersion} when converted. Licence of the source data (MIT):`,
    '',
    ...licence,
  ];
  return { bytes: Serialize(comments, records), records, mismatches };
}

// --- The "claude" encoding: the legacy Claude vocabulary, whose reference
// runs tiktoken on text.normalize("NFKC").
//
// ctxkit's NFKC uses Unicode 16.0 (lib/unicode/normalize.h); node's String
// normalize uses its ICU's Unicode version. Texts holding code points whose
// NFKC differs between the two would test the Unicode version rather than
// ctxkit, so they are left out. For node 20's ICU 78 (Unicode 17.0) these are
// the 35 code points below, all new in Unicode 17.0 (combining marks, and
// U+A7F1 with a compatibility decomposition): found by comparing, for every
// code point, node's NFKC and canonical reordering with the Unicode 16.0 data
// of lib/unicode/generate_normalization.mjs.
const kNfkcUnicodeDiffers = [[0x1acf, 0x1add], [0x1ae0, 0x1aeb], [0xa7f1, 0xa7f1], [0x10efa, 0x10efb],
  [0x1e6e3, 0x1e6e3], [0x1e6e6, 0x1e6e6], [0x1e6ee, 0x1e6ef], [0x1e6f5, 0x1e6f5]];
function NfkcUnicodeDiffers(text) {
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (kNfkcUnicodeDiffers.some(([lo, hi]) => c >= lo && c <= hi)) return true;
  }
  return false;
}

// Texts for NFKC itself, added to the corpus in the claude file only.
function NfkcCorpus() {
  const cases = [];
  const Add = (label, text) => cases.push([`nfkc/${label}`, text]);
  Add('ligatures', 'ﬁnancial ﬂow oﬀer eﬃcient baﬄe ﬅ ﬆ Ĳ ǆ ǈ');
  Add('fullwidth', 'ＡＢＣ　ｄｅｆ　１２３！？（ｘ）［ｙ］＜ｚ＞');
  Add('fullwidth-code', 'ｉｆ　（ｘ　＝＝　１）　｛　ｒｅｔｕｒｎ；　｝');
  Add('letterlike', 'ℌℍℎ ℏ \u212a \u212b \u2126 ℓ ℮ № ™ ℡ ℀ ℅');
  Add('long-s', "ſ ẛ it'ſ ſtreet \u017f's");
  Add('super-sub', 'x² y³ H₂O 10⁻⁶ ¹²³ aⁿ ᵃᵇᶜ');
  Add('fractions', '½ ¼ ¾ ⅓ ⅞ ↉ 1⁄2');
  Add('circled', '① ⑳ ⓐ Ⓩ ㉑ ㊿ ⑴ ⒜ ⒈');
  Add('squared', '㎏ ㎞ ㏄ ㍻ ㌀ ㋀ ㈱ 🄰 🅐');
  Add('math-letters', '𝐀𝐁𝐂 𝑎𝑏𝑐 𝔄𝔅 𝕏 ℝℕℤ 𝟘𝟙𝟚 𝚤𝚥');
  Add('halfwidth', 'ｶﾀｶﾅ ﾊﾟﾋﾞ ﾝ ﾞﾟ ｡｢｣､ ﾡﾢﾤ');
  Add('hangul', '\u1100\u1161\u11a8 \u1112\u1161\u11ab \u3131\u314f \uac00\u11a8 \uac01\u11a8 \uac00\u11a7 한국어');
  Add('composition', 'cafe\u0301 nai\u0308ve o\u0323\u0302 s\u0307\u0323 \u1e0a\u0323 A\u030a \u00c0\u0323');
  Add('reorder', 'a\u0301\u0316 x\u05ae\u0591 q\u0307\u0323\u031b');
  Add('long-marks', 'a' + '\u0301\u0316'.repeat(40) + ' o' + '\u0308\u0323'.repeat(20) + 'z');
  Add('exclusions', '\u0958 \u0f73 \u0f75 \u0344 \u0340 \u2126 \u212b \u1fee \u0385');
  Add('arabic-presentation', '\ufdfa \ufefb \ufe8d\ufe8e \ufb50 \ufdf2');
  Add('spaces', 'a\u00a0b\u2002c\u2003d\u3000e\u202ff\u205fg\u2009h 100\u00a0km');
  Add('punctuation', '… ‥ ″ ‴ ‼ ⁇ ︙ ﹏ ﹐ ﹔ ‐');
  Add('roman', 'Ⅰ Ⅱ Ⅻ ⅰ ⅻ Ⅼ Ⅽ Ⅾ Ⅿ');
  Add('cjk-compat', '\uf900\uf901 \ufa10 \u2f00\u2f01 \u3251 ㍱ 丽');
  Add('unicode-16', '\u{113c2}\u{113c2} \u{113b8}\u{113c2} \u{16d67}\u{16d67} \u{105c0} \u{1e030}');
  Add('specials', '<EOT> a<EOT>b <META> <META_START>x<META_END> <SOS>\n<EOT><SOS> <eot> <EOT <|endoftext|>');
  Add('specials-fullwidth', '＜EOT＞ ＜META＞ \uff1cSOS\uff1e x＜EOT＞y');
  Add('already-nfkc', 'Plain ASCII text, with digits 123 and punctuation!? — and “quotes”, 日本語, 한국어.');
  {
    const rng = new Rng(0x4e464b43);
    const pieces = ['a', 'e', 'o', 's', 'K', ' ', ' ', '\n', '1', '.', "'", "'s", 'ﬁ', 'ſ', '\u212a', '\u212b',
      'Ａ', '１', '\u3000', '\u00a0', '½', '²', '①', '㎏', 'ｶ', 'ﾞ', '\u0301', '\u0308', '\u0323', '\u0316',
      '\u05ae', '\u0591', '\u1100', '\u1161', '\u11a8', '\uac00', '\u3131', 'é', '\u00c5', 'ℌ', '…', '日', '<EOT>',
      '＜', '＞', 'EOT', '\u0958', '\ufdfa', '🙂', '\u{113c2}'];
    for (let i = 0; i < 120; ++i) {
      let t = '';
      for (let n = rng.Range(1, 40); n > 0; --n) t += rng.Pick(pieces);
      Add(`random-${i}`, t);
    }
  }
  return cases;
}

function BuildClaudeFile() {
  const kName = 'claude';
  const tokenizer = claudeTokenizer.getTokenizer();
  const records = [];
  let excluded = 0;
  for (const [label, text] of [...BuildCorpus(), ...NfkcCorpus()]) {
    if (NfkcUnicodeDiffers(text)) {
      ++excluded;
      continue;
    }
    const normalized = text.normalize('NFKC');
    const all = Array.from(tokenizer.encode(normalized, 'all'));
    // The same count as the package's own entry point.
    if (claudeTokenizer.countTokens(text) !== all.length) throw new Error(`countTokens differs on ${label}`);
    records.push({
      label,
      text,
      results: [
        { encoding: kName, mode: 0, ids: Array.from(tokenizer.encode_ordinary(normalized)) },
        { encoding: kName, mode: 1, ids: all },
      ],
    });
  }
  tokenizer.free();
  const comments = [
    'Golden token ids for ctxkit\'s "claude" encoding (the legacy Claude vocabulary).',
    `Reference: npm @anthropic-ai/tokenizer@${kClaudeTokenizerVersion} (getTokenizer(): tiktoken@${kTiktokenVersion} over claude.json),`,
    'applied to text.normalize("NFKC") as its countTokens does; the texts stored are the originals.',
    'mode 0 = encode_ordinary(NFKC(text)); mode 1 = encode(NFKC(text), allowed_special="all").',
    `Texts: the tiktoken corpus plus nfkc/*, written by generate_golden.mjs; ${excluded} left out whose NFKC`,
    'differs between Unicode 16.0 (ctxkit) and the Unicode of node\'s ICU.',
  ];
  return { bytes: Serialize(comments, records, [kName]), records, excluded };
}

function PrintStats(name, records) {
  console.log(`${name}: ${records.length} texts, ${records.reduce((a, r) => a + Buffer.byteLength(r.text), 0)} text bytes`);
  for (const e of [...new Set(records.flatMap((r) => r.results.map((x) => x.encoding)))]) {
    for (const mode of [0, 1]) {
      let cases = 0, tokens = 0;
      for (const r of records) for (const res of r.results) if (res.encoding === e && res.mode === mode) { ++cases; tokens += res.ids.length; }
      if (cases) console.log(`  ${e.padEnd(12)} mode ${mode}: ${String(cases).padStart(5)} cases ${String(tokens).padStart(7)} tokens`);
    }
  }
}

// Edge coverage: count texts containing each feature, so a regression in the
// generator that drops a category is visible.
function PrintCoverage(records) {
  const features = {
    'CJK': /[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]/u, 'emoji ZWJ': /\u200d/u, 'flags': /\p{Regional_Indicator}/u,
    'skin tones': /[\u{1f3fb}-\u{1f3ff}]/u, 'Arabic': /\p{Script=Arabic}/u, 'Hebrew': /\p{Script=Hebrew}/u,
    'Devanagari': /\p{Script=Devanagari}/u, 'Thai': /\p{Script=Thai}/u, 'combining marks': /\p{M}/u,
    '\\r\\n': /\r\n/, 'lone \\r': /\r(?!\n)/, 'U+0085': /\u0085/, 'U+FEFF': /\ufeff/, 'U+00A0': /\u00a0/,
    'U+3000': /\u3000/, 'digit run >= 10': /\p{N}{10}/u, 'contraction': /'(?:s|t|re|ve|m|ll|d)/iu, 'long s': /'ſ/u,
    'Kelvin': /\u212a/u, 'special token text': /<\|[a-z_]+\|>/, 'punct + newline': /[^\s\p{L}\p{N}]\r?\n/u,
    'space run >= 16': / {16}/, 'letters run >= 200': /\p{L}{200}/u,
  };
  for (const [name, re] of Object.entries(features)) {
    console.log(`  ${name.padEnd(20)} ${records.filter((r) => re.test(r.text)).length} texts`);
  }
}

const corpus = BuildCorpusFile();
const longRuns = BuildLongRunsFile();
const plans = BuildTestPlansFile();
if (claudeTokenizer !== null && !['16.0', '17.0'].includes(process.versions.unicode)) {
  console.error(`node's ICU has Unicode ${process.versions.unicode}: recompute kNfkcUnicodeDiffers for it`);
  process.exit(1);
}
const claude = claudeTokenizer === null ? null : BuildClaudeFile();
for (const e of Object.values(encoders)) e.free();

// Known values, checked on every run so the C++ test hard-codes only what the
// reference produced.
{
  const hello = corpus.records.find((r) => r.label === 'prose/0');
  const got = hello.results.find((r) => r.encoding === 'cl100k_base' && r.mode === 0).ids.join(',');
  if (hello.text !== 'hello world' || got !== '15339,1917') throw new Error(`cl100k "hello world" = ${got}`);
}

if (stats) {
  console.log(`o200k_harmony supported by tiktoken@${kTiktokenVersion}: ${harmonySupported}`);
  PrintStats(kCorpusFile, corpus.records);
  PrintCoverage(corpus.records);
  PrintStats(kTestPlansFile, plans.records);
  PrintStats(kLongRunsFile, longRuns.records);
  if (claude !== null) {
    console.log(`${kClaudeFile}: ${claude.excluded} corpus texts left out (NFKC differs between Unicode 16.0 ` +
                `and node's Unicode ${process.versions.unicode})`);
    PrintStats(kClaudeFile, claude.records);
  }
}
if (plans.mismatches.length) {
  console.error(`TestPlans vectors that differ from tiktoken: ${plans.mismatches.join(' ')}`);
}

const outputs = [[kCorpusFile, corpus.bytes], [kTestPlansFile, plans.bytes], [kLongRunsFile, longRuns.bytes]];
if (claude !== null) outputs.push([kClaudeFile, claude.bytes]);
else console.log(`${kClaudeFile}: skipped (no --claude)`);
if (check) {
  let ok = true;
  for (const [name, bytes] of outputs) {
    const file = path.join(outDir, name);
    const committed = fs.existsSync(file) ? fs.readFileSync(file) : null;
    const same = committed !== null && committed.equals(bytes);
    console.log(`${same ? 'OK      ' : 'MISMATCH'} ${file} (${bytes.length} bytes recomputed)`);
    ok &&= same;
  }
  process.exit(ok && plans.mismatches.length === 0 ? 0 : 1);
} else {
  for (const [name, bytes] of outputs) {
    fs.writeFileSync(path.join(outDir, name), bytes);
    console.log(`wrote ${path.join(outDir, name)} (${bytes.length} bytes)`);
  }
  if (plans.mismatches.length) process.exit(1);
}
