// The transport-independent part of the end-to-end suite: every tool and
// action, every resource and template, every prompt, completions,
// pagination, the error codes, logging, progress and cancellation, through
// the official SDK client. stdio.test.mjs and streamable_http.test.mjs run it
// over their transport with `connect(options)` returning a handle from
// lib.mjs (connectStdio / connectHttp).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

import {
  OutputChecker,
  PROMPT_NAMES,
  RESOURCE_URIS,
  TEMPLATE_URIS,
  TOOL_NAMES,
  UNSTRUCTURED_TOOLS,
  UUID_RE,
  call,
  compileStrict,
  expectRpcError,
  manyMessages,
  round,
  sleep,
  toolDoc,
  waitUntil,
} from './lib.mjs';

const DEFAULT_MODEL = 'claude-3-5-sonnet';
const SEED_QUERY = 'I was just wondering if you could maybe help me understand how to really optimize my prompts for better token usage, basically.';
const REVIEW_TEXT = 'Please review this function: function add(a, b) { return a + b; }';

// A conversation long enough for compression to have something to do.
const LONG_TURNS = [
  ['user', 'We need to decide how the token cache should be keyed. Right now every prompt is hashed with SHA-256 and stored under a prefix such as system-prompts, but hit rates are low because tiny whitespace differences produce new keys.'],
  ['assistant', 'Normalizing whitespace before hashing would raise the hit rate. Collapse runs of spaces, trim line ends and normalize Unicode to NFC, then hash. Keep the original text as the cached value so nothing changes for callers.'],
  ['user', 'Good idea. What about expiry? Some entries are system prompts that never change, others are compressed summaries of conversations that change every few minutes.'],
  ['assistant', 'Give each prefix its own default TTL: one day for system-prompts, ten minutes for summaries. Callers can still pass an explicit ttl in milliseconds to override the default for a single entry.'],
  ['user', 'How do we measure whether the cache is worth it? I would like a number I can put on the dashboard every morning.'],
  ['assistant', 'Track hits, misses and the tokens each hit saved. The hit rate is hits divided by lookups, and tokens saved is the sum over hits of the cached entry size. Report both per prefix and in total.'],
  ['user', 'The compression step is slow on long conversations. It takes seconds for a few hundred messages, which blocks the chat.'],
  ['assistant', 'Count tokens incrementally: store each message token count when it is added, so compression only sums stored numbers. Summaries then only need the text of the messages being folded, not a full recount.'],
  ['user', 'Which messages should never be dropped when we compress?'],
  ['assistant', 'Keep the system prompt, messages with code blocks, decisions and the most recent turns verbatim. Routine acknowledgements and repeated questions are the first to go into the summary.'],
  ['user', 'Let us write that down as the policy. Also, can you remind me of the command to rebuild the index?'],
  ['assistant', 'Run ctxkit reindex --db ./store after stopping the server. The policy: preserve system, code, decisions and the recent window; summarize the rest by topic.'],
];

// Seed 001's request, with schema, tool and error messages to classify.
function compactRequest() {
  const messages = [
    { role: 'user', content: 'Show me the users table' },
    { role: 'assistant', content: "Here's the schema: CREATE TABLE users (id serial primary key, email text not null, created_at timestamptz)." },
  ];
  for (let i = 0; i < 16; i++) {
    messages.push({ role: 'user', content: `How many users signed up on day ${i + 1}? Please run query_database for it.` });
    messages.push({ role: 'assistant', content: `Day ${i + 1}: ${100 + i * 7} users signed up according to query_database (SELECT count(*) FROM users WHERE created_at::date = '2024-11-${String(i + 1).padStart(2, '0')}').` });
  }
  messages.push({ role: 'user', content: 'ERROR: relation "orders" does not exist. Why?' });
  messages.push({ role: 'assistant', content: 'The orders table has not been created yet; create it with CREATE TABLE orders (...) first.' });
  return {
    messages,
    max_tokens: 300,
    recent_window: 4,
    keep_anchors: true,
    options: {
      preserve_tool_results: true,
      preserve_schema_info: true,
      enable_summarization: true,
      min_important_messages: 3,
      token_counter_type: 'anthropic',
    },
  };
}

export function defineCommonSuite(connect) {
  describe('tools, resources and prompts', () => {
    let h;
    let client;
    let checker;
    let tools;
    // Filled by the tool tests, used by resources, prompts and completions.
    const state = {};

    before(async () => {
      h = await connect();
      client = h.client;
      tools = (await client.listTools()).tools;
      checker = new OutputChecker(tools);
    });
    after(async () => {
      await h?.close();
    });

    it('initialize negotiated the latest revision and the capabilities', () => {
      const caps = client.getServerCapabilities();
      for (const cap of ['tools', 'resources', 'prompts', 'logging', 'completions']) {
        assert.ok(caps[cap], `capability ${cap}: ${JSON.stringify(caps)}`);
      }
      const info = client.getServerVersion();
      assert.equal(typeof info.name, 'string');
      assert.equal(typeof info.version, 'string');
    });

    it('lists every tool with its input and output schemas', () => {
      assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
      for (const tool of tools) {
        assert.equal(typeof tool.description, 'string', `${tool.name} description`);
        assert.ok(tool.description.length > 0);
        assert.equal(tool.inputSchema.type, 'object', `${tool.name} inputSchema`);
        compileStrict(tool.inputSchema, `${tool.name} inputSchema`);
        if (UNSTRUCTURED_TOOLS.includes(tool.name)) {
          assert.equal(tool.outputSchema, undefined, `${tool.name} answers text, not an object`);
          continue;
        }
        assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
        assert.equal(tool.outputSchema.type, 'object', `${tool.name} outputSchema`);
        compileStrict(tool.outputSchema, `${tool.name} outputSchema`);
      }
      const addMessage = tools.find((t) => t.name === 'add_message');
      for (const level of ['low', 'HIGH', 'critical', 'MEDIUM']) {
        assert.ok(addMessage.inputSchema.properties.importance.enum.includes(level), `importance ${level}`);
      }
      const conv = tools.find((t) => t.name === 'manage_conversation');
      assert.deepEqual(conv.inputSchema.properties.action.enum.slice(0, 5),
        ['create', 'add_message', 'get', 'list', 'delete']);
      assert.deepEqual(conv.inputSchema.required, ['action']);
      const cache = tools.find((t) => t.name === 'smart_cache');
      assert.deepEqual(cache.inputSchema.properties.action.enum, ['store', 'retrieve', 'check', 'stats', 'clear']);
      const refs = tools.find((t) => t.name === 'track_references');
      assert.deepEqual(refs.inputSchema.properties.action.enum, ['add', 'get', 'list', 'delete', 'search']);
      assert.deepEqual(refs.inputSchema.properties.type.enum, ['file', 'url', 'code', 'note', 'document']);
      const compress = tools.find((t) => t.name === 'compress_context');
      assert.deepEqual(compress.inputSchema.properties.strategy.enum, ['summarize', 'remove_old', 'compress_similar', 'smart']);
      assert.deepEqual(compress.inputSchema.required, ['conversation_id']);
      const optimize = tools.find((t) => t.name === 'optimize_query');
      assert.deepEqual(optimize.inputSchema.properties.optimization_goal.enum, ['reduce_tokens', 'improve_clarity', 'both']);
      assert.deepEqual(optimize.inputSchema.required, ['query']);
      const count = tools.find((t) => t.name === 'count_tokens');
      assert.deepEqual(count.inputSchema.required, ['input']);
      const compact = tools.find((t) => t.name === 'compact_chat');
      assert.deepEqual(compact.inputSchema.required, ['messages']);
    });

    it('manage_conversation create', async () => {
      const before = Date.now();
      const doc = await call(client, checker, 'manage_conversation', {
        action: 'create',
        title: 'Code Review Session',
        metadata: { project: 'mcp-optimizer', reviewer: 'alice' },
      });
      const c = doc.conversation;
      assert.match(c.id, UUID_RE);
      assert.equal(c.title, 'Code Review Session');
      assert.equal(c.model, DEFAULT_MODEL);
      assert.equal(c.total_tokens, 0);
      assert.equal(c.message_count, 0);
      assert.ok(c.created_at >= before - 2000 && c.created_at <= Date.now() + 2000,
        `created_at in milliseconds: ${c.created_at}`);
      assert.equal(doc.message, 'Conversation "Code Review Session" created successfully');
      state.conv = c;

      const gpt = await call(client, checker, 'manage_conversation', {
        action: 'create', title: 'GPT notes', model: 'gpt-4',
      });
      assert.equal(gpt.conversation.model, 'gpt-4');
      assert.notEqual(gpt.conversation.id, c.id);
      state.gpt = gpt.conversation;
    });

    it('manage_conversation add_message', async () => {
      const id = state.conv.id;
      const first = await call(client, checker, 'manage_conversation', {
        action: 'add_message', conversation_id: id, role: 'user', content: REVIEW_TEXT,
      });
      assert.match(first.message.id, UUID_RE);
      assert.equal(first.message.role, 'user');
      assert.ok(Number.isInteger(first.message.tokens) && first.message.tokens > 0);
      assert.ok(first.message.created_at >= state.conv.created_at);
      assert.equal(first.conversation.total_tokens, first.message.tokens);
      assert.equal(first.conversation.message_count, 1);

      // The message's tokens are the model's count of its text.
      const counted = await call(client, checker, 'count_tokens', {
        input: REVIEW_TEXT, model: DEFAULT_MODEL, include_recommendations: false,
      });
      assert.equal(first.message.tokens, counted.tokens, 'add_message tokens == count_tokens of the content');

      const second = await call(client, checker, 'manage_conversation', {
        action: 'add_message', conversation_id: id, role: 'assistant',
        content: 'The function is simple and correct. Consider adding type annotations: function add(a: number, b: number): number.',
      });
      assert.equal(second.message.role, 'assistant');
      assert.equal(second.conversation.message_count, 2);
      assert.equal(second.conversation.total_tokens, first.message.tokens + second.message.tokens);
      const system = await call(client, checker, 'manage_conversation', {
        action: 'add_message', conversation_id: id, role: 'system', content: 'You are a careful code reviewer.',
      });
      assert.equal(system.message.role, 'system');
      assert.equal(system.conversation.message_count, 3);
      state.messages = [first.message, second.message, system.message];
      state.total = first.message.tokens + second.message.tokens + system.message.tokens;
      assert.equal(system.conversation.total_tokens, state.total);

      const missing = await call(client, checker, 'manage_conversation', {
        action: 'add_message', conversation_id: '00000000-0000-4000-8000-000000000000', role: 'user', content: 'hi',
      }, { expectError: true });
      assert.equal(missing.error, 'Conversation not found');
    });

    it('manage_conversation get', async () => {
      const doc = await call(client, checker, 'manage_conversation', {
        action: 'get', conversation_id: state.conv.id, include_messages: true,
      });
      const c = doc.conversation;
      assert.equal(c.id, state.conv.id);
      assert.equal(c.title, 'Code Review Session');
      assert.equal(c.model, DEFAULT_MODEL);
      assert.equal(c.created_at, state.conv.created_at);
      assert.ok(c.updated_at >= c.created_at);
      assert.equal(c.total_tokens, state.total);
      assert.equal(c.message_count, 3);
      assert.deepEqual(c.metadata, { project: 'mcp-optimizer', reviewer: 'alice' });
      assert.equal(doc.messages.length, 3);
      assert.deepEqual(doc.messages.map((m) => m.role), ['user', 'assistant', 'system']);
      assert.equal(doc.messages[0].content, REVIEW_TEXT);
      for (let i = 0; i < 3; i++) {
        assert.equal(doc.messages[i].id, state.messages[i].id);
        assert.equal(doc.messages[i].tokens, state.messages[i].tokens);
        assert.equal(doc.messages[i].is_compressed, false);
        assert.equal(doc.messages[i].created_at, state.messages[i].created_at);
      }
      assert.ok(Number.isInteger(doc.actual_tokens));
      assert.ok(doc.actual_tokens >= c.total_tokens, 'actual_tokens counts the message overhead too');

      const defaulted = await call(client, checker, 'manage_conversation', {
        action: 'get', conversation_id: state.conv.id,
      });
      assert.equal(defaulted.messages.length, 3, 'include_messages defaults to true');

      const bare = await call(client, checker, 'manage_conversation', {
        action: 'get', conversation_id: state.conv.id, include_messages: false,
      });
      assert.equal(bare.conversation.id, state.conv.id);
      assert.equal(bare.messages, undefined, 'no messages with include_messages false');
    });

    it('manage_conversation list', async () => {
      const doc = await call(client, checker, 'manage_conversation', { action: 'list', limit: 10 });
      assert.ok(doc.total >= 2);
      assert.equal(doc.showing, doc.conversations.length);
      const ids = doc.conversations.map((c) => c.id);
      assert.ok(ids.includes(state.conv.id) && ids.includes(state.gpt.id));
      const mine = doc.conversations.find((c) => c.id === state.conv.id);
      assert.equal(mine.title, 'Code Review Session');
      assert.equal(mine.model, DEFAULT_MODEL);
      assert.equal(mine.total_tokens, state.total);
      assert.equal(mine.message_count, 3);
      // Newest first: the conversation created second comes first.
      assert.ok(ids.indexOf(state.gpt.id) < ids.indexOf(state.conv.id), 'newest first');

      const one = await call(client, checker, 'manage_conversation', { action: 'list', limit: 1 });
      assert.equal(one.showing, 1);
      assert.equal(one.conversations.length, 1);
      assert.equal(one.total, doc.total);

      const defaulted = await call(client, checker, 'manage_conversation', { action: 'list' });
      assert.equal(defaulted.total, doc.total);
    });

    it('manage_conversation delete', async () => {
      const scratch = await call(client, checker, 'manage_conversation', { action: 'create', title: 'Scratch' });
      const id = scratch.conversation.id;
      await call(client, checker, 'manage_conversation', {
        action: 'add_message', conversation_id: id, role: 'user', content: 'temporary',
      });
      const doc = await call(client, checker, 'manage_conversation', { action: 'delete', conversation_id: id });
      assert.equal(doc.message, 'Conversation "Scratch" deleted successfully');
      const gone = await call(client, checker, 'manage_conversation', { action: 'get', conversation_id: id },
        { expectError: true });
      assert.equal(gone.error, 'Conversation not found');
      const again = await call(client, checker, 'manage_conversation', { action: 'delete', conversation_id: id },
        { expectError: true });
      assert.equal(again.error, 'Conversation not found');
    });

    it('compress_context with every strategy', async () => {
      const created = await call(client, checker, 'manage_conversation', { action: 'create', title: 'Cache design' });
      const id = created.conversation.id;
      for (const [role, content] of LONG_TURNS) {
        await call(client, checker, 'manage_conversation', { action: 'add_message', conversation_id: id, role, content });
      }
      state.long = id;
      const stored = await call(client, checker, 'manage_conversation', { action: 'get', conversation_id: id });
      // What the model would be sent: the messages with their overhead, as
      // count_tokens counts a message array (= get's actual_tokens).
      const countMessages = async (messages) => (await call(client, checker, 'count_tokens', {
        input: messages.map((m) => ({ role: m.role, content: m.content })), include_recommendations: false,
      })).tokens;
      const originalTokens = await countMessages(stored.messages);
      assert.equal(stored.actual_tokens, originalTokens, 'get actual_tokens == count_tokens of the messages');

      for (const strategy of ['summarize', 'remove_old', 'compress_similar', 'smart']) {
        const doc = await call(client, checker, 'compress_context', {
          conversation_id: id, strategy, target_ratio: 0.5, preserve_recent: 3,
        });
        const what = `${strategy}: ${JSON.stringify(doc).slice(0, 600)}`;
        assert.equal(doc.strategy, strategy, what);
        assert.equal(doc.original_message_count, LONG_TURNS.length, what);
        assert.equal(doc.original_tokens, originalTokens, what);
        assert.ok(doc.compressed_tokens <= doc.original_tokens, what);
        assert.equal(doc.tokens_saved, doc.original_tokens - doc.compressed_tokens, what);
        assert.ok(Math.abs(doc.compression_ratio - doc.compressed_tokens / doc.original_tokens) <= 0.01, what);
        assert.equal(doc.compressed_message_count, doc.compressed_messages.length, what);
        assert.ok(doc.compressed_messages.length >= 1, what);
        for (const m of doc.compressed_messages) {
          assert.ok(['user', 'assistant', 'system', 'tool'].includes(m.role), what);
          assert.equal(typeof m.content, 'string', what);
          assert.equal(typeof m.is_compressed, 'boolean', what);
          assert.ok(Number.isInteger(m.tokens) && m.tokens > 0, what);
        }
        assert.equal(doc.compressed_tokens, await countMessages(doc.compressed_messages),
          `compressed_tokens == count_tokens of compressed_messages (${what})`);
        if (strategy !== 'compress_similar') {
          // The recent messages are kept verbatim at the end.
          const tail = doc.compressed_messages.slice(-3);
          assert.deepEqual(tail.map((m) => [m.role, m.content]), LONG_TURNS.slice(-3), what);
          assert.ok(tail.every((m) => m.is_compressed === false), what);
          assert.ok(doc.compressed_tokens < doc.original_tokens, what);
        }
        if (strategy === 'remove_old') {
          assert.ok(doc.compressed_messages.length < LONG_TURNS.length, what);
        }
        if (strategy === 'summarize') {
          assert.ok(doc.compressed_messages.some((m) => m.is_compressed), what);
        }
      }

      const defaults = await call(client, checker, 'compress_context', { conversation_id: id });
      assert.equal(defaults.strategy, 'smart', 'strategy defaults to smart');

      const missing = await call(client, checker, 'compress_context',
        { conversation_id: '00000000-0000-4000-8000-000000000000' }, { expectError: true });
      assert.equal(missing.error, 'Conversation not found');
      const ratio = await call(client, checker, 'compress_context',
        { conversation_id: id, target_ratio: 0.95 }, { expectError: true });
      assert.equal(ratio.error, 'Validation error');
      assert.deepEqual(ratio.details[0].path, ['target_ratio']);
    });

    it('count_tokens for text, messages and structured input', async () => {
      const text = await call(client, checker, 'count_tokens', {
        input: 'Hello, world! This is a test message for token counting.',
        model: 'claude-3-5-sonnet',
        include_recommendations: true,
      });
      assert.ok(Number.isInteger(text.tokens) && text.tokens > 5 && text.tokens < 30, `tokens ${text.tokens}`);
      assert.equal(text.model, 'claude-3-5-sonnet');
      assert.equal(text.family, 'claude');
      assert.equal(text.limit, 200000);
      assert.equal(text.percentage, round((text.tokens / 200000) * 100, 3));
      assert.deepEqual(text.recommendation, {
        status: 'safe',
        percentage: text.percentage,
        action: 'Token usage is healthy. No action needed.',
        shouldCompress: false,
      });

      const defaulted = await call(client, checker, 'count_tokens', { input: 'Hello, world! This is a test message for token counting.' });
      assert.equal(defaulted.model, DEFAULT_MODEL);
      assert.equal(defaulted.tokens, text.tokens);
      assert.ok(defaulted.recommendation, 'include_recommendations defaults to true');

      const messages = await call(client, checker, 'count_tokens', {
        input: [
          { role: 'user', content: 'What is 2+2?' },
          { role: 'assistant', content: '2+2 equals 4.' },
        ],
        model: 'gpt-4-turbo',
      });
      assert.equal(messages.model, 'gpt-4-turbo');
      assert.equal(messages.family, 'gpt');
      assert.equal(messages.limit, 128000);
      assert.equal(messages.percentage, round((messages.tokens / 128000) * 100, 3));
      const b = messages.breakdown;
      assert.ok(b.content_tokens > 0 && b.overhead_tokens > 0 && b.conversation_tokens > 0, JSON.stringify(b));
      assert.equal(messages.tokens, b.content_tokens + b.overhead_tokens);
      assert.ok(b.conversation_tokens <= b.overhead_tokens);
      assert.equal(messages.recommendation.status, 'safe');

      const structured = await call(client, checker, 'count_tokens', {
        input: { query: 'SELECT * FROM users', params: [1, 2, 3], nested: { ok: true } },
        model: 'gpt-4o',
        include_recommendations: false,
      });
      assert.ok(structured.tokens > 0);
      assert.equal(structured.model, 'gpt-4o');
      assert.equal(structured.recommendation, undefined, 'no recommendation when not asked for');

      // The thresholds: warning from 75%, critical from 90% of the window.
      const word = ' hello';
      const warning = await call(client, checker, 'count_tokens', { input: word.repeat(100000), model: 'gpt-4-turbo' });
      assert.ok(warning.percentage >= 75 && warning.percentage < 90, `percentage ${warning.percentage}`);
      assert.equal(warning.recommendation.status, 'warning');
      const critical = await call(client, checker, 'count_tokens', { input: word.repeat(130000), model: 'gpt-4-turbo' });
      assert.ok(critical.percentage > 100, `percentage ${critical.percentage}`);
      assert.equal(critical.recommendation.status, 'critical');
      assert.equal(critical.recommendation.shouldCompress, true);

      // With a conversation: its history counts towards the percentage.
      const withConv = await call(client, checker, 'count_tokens', {
        input: 'One more question.', conversation_id: state.conv.id,
      });
      const alone = await call(client, checker, 'count_tokens', { input: 'One more question.' });
      assert.equal(withConv.tokens, alone.tokens);
      assert.ok(withConv.percentage > alone.percentage);
    });

    it('smart_cache store, retrieve, check, stats and clear', async () => {
      const content = 'You are a helpful coding assistant specialized in TypeScript and React. Answer with short, correct code.';
      const other = 'You are a terse SQL expert. Answer with one PostgreSQL query.';
      await call(client, checker, 'smart_cache', { action: 'store', content: other, prefix: 'system-prompts' });
      const before = Date.now();
      const stored = await call(client, checker, 'smart_cache', {
        action: 'store', content, prefix: 'system-prompts', ttl: 3600000,
      });
      assert.ok(stored.key.startsWith('system-prompts:'), stored.key);
      assert.ok(stored.tokens > 0);
      assert.ok(Math.abs(stored.expires_at - (before + 3600000)) < 60000, `expires_at ${stored.expires_at}`);
      assert.equal(stored.message, 'Content cached successfully');

      const retrieved = await call(client, checker, 'smart_cache', { action: 'retrieve', key: stored.key });
      assert.equal(retrieved.key, stored.key);
      assert.equal(retrieved.content, content);
      assert.equal(retrieved.tokens, stored.tokens);
      assert.ok(retrieved.hit_count >= 1);
      assert.ok(retrieved.created_at >= before - 2000);
      assert.ok(retrieved.last_accessed >= retrieved.created_at);
      const again = await call(client, checker, 'smart_cache', { action: 'retrieve', key: stored.key });
      assert.equal(again.hit_count, retrieved.hit_count + 1);

      const check = await call(client, checker, 'smart_cache', { action: 'check', content });
      assert.equal(check.exists, true);
      assert.equal(check.key, stored.key);
      assert.equal(check.tokens_saved, stored.tokens);
      assert.equal(check.message, 'Content already cached');
      const miss = await call(client, checker, 'smart_cache', { action: 'check', content: 'never stored anywhere' });
      assert.equal(miss.exists, false);
      assert.equal(miss.message, 'Content not found in cache');

      // A key of the caller's own finds the content again.
      const weekly = 'Weekly summary: cache design decided.';
      const keyed = await call(client, checker, 'smart_cache', {
        action: 'store', key: 'weekly', prefix: 'summaries', content: weekly,
      });
      assert.ok(keyed.key.startsWith('summaries:'), keyed.key);
      const byOwnKey = await call(client, checker, 'smart_cache', { action: 'retrieve', key: 'weekly', prefix: 'summaries' });
      assert.equal(byOwnKey.content, weekly);
      const byKey = await call(client, checker, 'smart_cache', { action: 'retrieve', key: keyed.key });
      assert.equal(byKey.content, weekly);

      const stats = await call(client, checker, 'smart_cache', { action: 'stats' });
      const s = stats.stats;
      assert.equal(s.total_entries, 3);
      assert.ok(s.total_hits >= 4);
      assert.ok(s.tokens_saved >= 2 * stored.tokens);
      assert.equal(typeof s.hit_rate, 'number');
      assert.ok(s.hit_rate > 0 && s.hit_rate <= 100);
      assert.equal(typeof s.avg_tokens_per_entry, 'number');
      assert.ok(['high', 'medium', 'low'].includes(s.effectiveness), s.effectiveness);

      const cleared = await call(client, checker, 'smart_cache', { action: 'clear', prefix: 'system-prompts' });
      assert.equal(cleared.cleared, 2);
      assert.equal(cleared.message, "Cleared 2 cache entries with prefix 'system-prompts'");
      const after = await call(client, checker, 'smart_cache', { action: 'retrieve', key: stored.key },
        { expectError: true });
      assert.match(after.error, /not found/i);
      const noKey = await call(client, checker, 'smart_cache', { action: 'retrieve' }, { expectError: true });
      assert.equal(noKey.error, 'Validation error');
      assert.deepEqual(noKey.details[0].path, ['key']);
      const noContent = await call(client, checker, 'smart_cache', { action: 'store' }, { expectError: true });
      assert.equal(noContent.error, 'Validation error');
      assert.deepEqual(noContent.details[0].path, ['content']);
      // Leave one entry for the cache-stats resource.
      state.cacheKey = keyed.key;
    });

    it('track_references add, get, list, search and delete', async () => {
      const code = 'function countTokens(text: string): number { return encode(text).length; }';
      const added = await call(client, checker, 'track_references', {
        action: 'add',
        conversation_id: state.conv.id,
        type: 'code',
        title: 'Token Counter Implementation',
        content: code,
        metadata: { language: 'typescript', file: 'src/utils/tokenizer.ts' },
      });
      const r = added.reference;
      assert.match(r.id, UUID_RE);
      assert.equal(r.conversation_id, state.conv.id);
      assert.equal(r.type, 'code');
      assert.equal(r.title, 'Token Counter Implementation');
      assert.ok(r.tokens > 0);
      assert.ok(r.created_at > 1e12);
      assert.equal(added.message, 'Reference added successfully');
      state.ref = r;

      const note = await call(client, checker, 'track_references', {
        action: 'add', conversation_id: state.conv.id, type: 'url', title: 'MCP specification',
        content: 'https://modelcontextprotocol.io/specification/2025-11-25',
      });

      const got = await call(client, checker, 'track_references', { action: 'get', reference_id: r.id });
      assert.equal(got.reference.id, r.id);
      assert.equal(got.reference.conversation_id, state.conv.id);
      assert.equal(got.reference.content, code);
      assert.equal(got.reference.tokens, r.tokens);
      assert.equal(got.reference.created_at, r.created_at);
      assert.deepEqual(got.reference.metadata, { language: 'typescript', file: 'src/utils/tokenizer.ts' });

      const list = await call(client, checker, 'track_references', { action: 'list', conversation_id: state.conv.id });
      assert.equal(list.total, 2);
      assert.deepEqual(list.references.map((x) => x.id).sort(), [r.id, note.reference.id].sort());
      const listed = list.references.find((x) => x.id === r.id);
      assert.equal(listed.type, 'code');
      assert.equal(listed.title, 'Token Counter Implementation');
      assert.equal(listed.tokens, r.tokens);
      const all = await call(client, checker, 'track_references', { action: 'list' });
      assert.ok(all.total >= 2);

      const search = await call(client, checker, 'track_references', { action: 'search', search_query: 'token counter' });
      assert.ok(search.total >= 1);
      assert.equal(search.total, search.results.length);
      assert.equal(search.results[0].id, r.id);
      assert.equal(search.results[0].type, 'code');
      assert.equal(search.results[0].title, 'Token Counter Implementation');
      assert.equal(typeof search.results[0].preview, 'string');
      assert.ok(search.results[0].relevance > 0 && search.results[0].relevance <= 1);
      const none = await call(client, checker, 'track_references', { action: 'search', search_query: 'zebra quantum' });
      assert.equal(none.total, 0);
      assert.deepEqual(none.results, []);

      const deleted = await call(client, checker, 'track_references', { action: 'delete', reference_id: note.reference.id });
      assert.equal(deleted.message, 'Reference deleted successfully');
      const gone = await call(client, checker, 'track_references', { action: 'get', reference_id: note.reference.id },
        { expectError: true });
      assert.equal(gone.error, 'Reference not found');
      const noQuery = await call(client, checker, 'track_references', { action: 'search' }, { expectError: true });
      assert.equal(noQuery.error, 'Validation error');
      assert.deepEqual(noQuery.details[0].path, ['search_query']);
      const noConv = await call(client, checker, 'track_references', {
        action: 'add', conversation_id: '00000000-0000-4000-8000-000000000000', type: 'note', title: 't', content: 'c',
      }, { expectError: true });
      assert.equal(noConv.error, 'Conversation not found');
    });

    it('optimize_query with each goal', async () => {
      const doc = await call(client, checker, 'optimize_query', {
        query: SEED_QUERY, optimization_goal: 'both', model: 'claude-3-5-sonnet',
      });
      assert.equal(doc.original.query, SEED_QUERY);
      assert.ok(doc.original.tokens > 15);
      const filler = doc.original.issues.find((i) => i.type === 'filler_words');
      assert.ok(filler, JSON.stringify(doc.original.issues));
      for (const w of ['just', 'maybe', 'really', 'basically']) assert.ok(filler.words.includes(w), `filler ${w}`);
      assert.equal(typeof filler.impact, 'string');
      assert.equal(typeof doc.optimized.query, 'string');
      assert.ok(doc.optimized.tokens < doc.original.tokens);
      for (const w of ['just', 'maybe', 'really', 'basically']) {
        assert.ok(!new RegExp(`\\b${w}\\b`, 'i').test(doc.optimized.query), `${w} removed: ${doc.optimized.query}`);
      }
      assert.ok(doc.optimized.improvements.length >= 1);
      assert.equal(doc.analysis.tokens_saved, doc.original.tokens - doc.optimized.tokens);
      assert.equal(doc.analysis.reduction_percent, round((doc.analysis.tokens_saved / doc.original.tokens) * 100, 1));
      assert.ok(doc.analysis.clarity_score >= 0 && doc.analysis.clarity_score <= 1);
      assert.ok(Array.isArray(doc.analysis.recommendations));
      for (const rec of doc.analysis.recommendations) {
        assert.ok(['high', 'medium', 'low'].includes(rec.priority));
        assert.equal(typeof rec.suggestion, 'string');
      }

      for (const goal of ['reduce_tokens', 'improve_clarity']) {
        const g = await call(client, checker, 'optimize_query', { query: SEED_QUERY, optimization_goal: goal });
        assert.equal(g.original.query, SEED_QUERY);
        assert.ok(g.optimized.tokens <= g.original.tokens, goal);
      }
      const withContext = await call(client, checker, 'optimize_query', {
        query: 'Could you please summarize the decisions?', context: LONG_TURNS.map((t) => t[1]).join('\n'),
        max_tokens: 50,
      });
      assert.equal(withContext.original.query, 'Could you please summarize the decisions?');
      const empty = await call(client, checker, 'optimize_query', { query: '' }, { expectError: true });
      assert.equal(empty.error, 'Validation error');
    });

    it('compact_chat with seed 001 request', async () => {
      const request = compactRequest();
      const doc = await call(client, checker, 'compact_chat', request);
      const info = doc.compaction_info;
      assert.equal(info.original_count, request.messages.length);
      assert.equal(info.compacted_count, doc.messages.length);
      // dropped_count counts the input messages not emitted as themselves;
      // the output also holds summary_count summaries of them.
      assert.equal(info.dropped_count, info.original_count - info.compacted_count + (info.summary_count ?? 0),
        JSON.stringify(info));
      assert.ok(info.compacted_count < info.original_count, JSON.stringify(info));
      assert.ok(info.anchor_count >= 1, 'the schema message is an anchor');
      assert.ok(info.tokens_saved > 0);
      assert.ok(info.compression_ratio > 0 && info.compression_ratio < 1);
      assert.ok(doc.token_estimate > 0);
      // The recent window is kept verbatim.
      assert.deepEqual(doc.messages.slice(-4), request.messages.slice(-4));
      assert.deepEqual(doc.messages[0], request.messages[0], 'the first user message is kept');
      assert.ok(Array.isArray(doc.summary.topics));
      assert.ok(Array.isArray(doc.summary.tables));
      assert.ok(doc.summary.tables.includes('users'), JSON.stringify(doc.summary));
      assert.ok(Array.isArray(doc.summary.tools));
      assert.match(doc.summary.description, /^\[Compressed context: /);
      assert.ok(doc.messages.some((m) => m.content.includes('[Compressed context')), 'a summary message');

      const short = await call(client, checker, 'compact_chat', {
        messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }],
      });
      assert.deepEqual(short.messages, [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]);
      assert.equal(short.compaction_info.dropped_count, 0);
      const empty = await call(client, checker, 'compact_chat', { messages: [] }, { expectError: true });
      assert.equal(empty.success, false);
    });

    it('seed 003 tools: messages, relationships, similarity, summaries', async () => {
      const text = async (name, args) => {
        const result = await client.callTool({ name, arguments: args });
        assert.ok(!result.isError, `${name}: ${JSON.stringify(result.content)}`);
        assert.equal(result.structuredContent, undefined, `${name} sends text only`);
        return result.content[0].text;
      };
      assert.equal(await text('ping', {}), 'pong');
      const added = await call(client, checker, 'add_message', {
        contextId: 'sdk/auth', message: 'Move the login flow to OAuth with PKCE', role: 'user', importance: 'HIGH', tags: ['auth'],
      });
      assert.equal(added.importanceLevel, 'high');
      assert.equal(added.importance, 0.75);
      await call(client, checker, 'add_message', { contextId: 'sdk:auth', message: 'Sessions live in Redis', role: 'assistant' });
      // 'sdk/auth' and 'sdk:auth' are two contexts: ids are byte-exact.
      const edge = await call(client, checker, 'add_relationship', {
        sourceContextId: 'sdk/auth', targetContextId: 'sdk:auth', relationshipType: 'references', weight: 0.6,
      });
      assert.equal(edge.relationshipType, 'references');
      assert.deepEqual(JSON.parse(await text('get_related_contexts', { contextId: 'sdk/auth' })), ['sdk:auth']);
      assert.deepEqual(JSON.parse(await text('get_related_contexts', { contextId: 'sdk:auth', direction: 'outgoing' })), []);
      // A misspelled key is refused, not run with the default it misses.
      const typo = await client.callTool({ name: 'get_similar_contexts', arguments: { query: 'oauth login', limt: 3 } });
      assert.equal(typo.isError, true);
      assert.match(typo.content[0].text, /Unrecognized key: 'limt'; did you mean 'limit'\?/);
      const similar = JSON.parse(await text('get_similar_contexts', { query: 'oauth login', limit: 3 }));
      assert.equal(similar[0].contextId, 'sdk/auth');
      assert.ok(similar[0].similarity > 0 && similar[0].similarity <= 1);
      const summary = await call(client, checker, 'summarize_context', { contextId: 'sdk/auth' });
      assert.equal(summary.contextId, 'sdk/auth');
      assert.equal(typeof summary.summary, 'string');
      assert.ok(summary.summary.length > 0, 'summarize_context returns the summary, not the seed\'s ""');
      const retrieved = await call(client, checker, 'retrieve_context', { contextId: 'sdk/auth' });
      assert.equal(retrieved.messages.length, 1);
      assert.equal(retrieved.hasSummary, true);
      const missing = await client.callTool({ name: 'retrieve_context', arguments: { contextId: 'no such context' } });
      assert.equal(missing.isError, true);
      assert.deepEqual(toolDoc(missing), { success: false, error: 'Context not found' });
      const memory = await call(client, checker, 'context_memory', { action: 'find_path', contextId: 'sdk/auth', targetId: 'sdk:auth' });
      assert.deepEqual(memory.path, ['sdk/auth', 'sdk:auth']);
    });

    it('argument validation failures are tool errors in the seed form', async () => {
      const result = await client.callTool({ name: 'manage_conversation', arguments: { action: 'invalid' } });
      assert.equal(result.isError, true);
      const doc = toolDoc(result);
      checker.check('manage_conversation', doc);
      assert.equal(doc.success, false);
      assert.equal(doc.error, 'Validation error');
      assert.deepEqual(doc.details[0].path, ['action']);
      assert.equal(doc.details[0].message,
        "Invalid enum value. Expected 'create' | 'add_message' | 'get' | 'list' | 'delete', received 'invalid'");

      const missing = await call(client, checker, 'manage_conversation', { action: 'get' }, { expectError: true });
      assert.equal(missing.error, 'Validation error');
      assert.deepEqual(missing.details, [{ path: ['conversation_id'], message: 'Required' }]);

      const wrongType = await call(client, checker, 'count_tokens', { input: 'x', include_recommendations: 'yes' },
        { expectError: true });
      assert.equal(wrongType.error, 'Validation error');
      assert.deepEqual(wrongType.details[0].path, ['include_recommendations']);

      const noInput = await call(client, checker, 'count_tokens', {}, { expectError: true });
      assert.deepEqual(noInput.details[0].path, ['input']);
      assert.equal(noInput.details[0].message, 'Required');

      const extra = await call(client, checker, 'manage_conversation', { action: 'list', bogus: 1 }, { expectError: true });
      assert.equal(extra.error, 'Validation error');

      const nested = await call(client, checker, 'compact_chat', { messages: [{ role: 'user', content: 5 }] },
        { expectError: true });
      assert.equal(nested.error, 'Validation error');
      assert.deepEqual(nested.details[0].path, ['messages', 0, 'content']);
    });

    it('lists the five resources and four templates', async () => {
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri).sort(), [...RESOURCE_URIS].sort());
      for (const r of resources) {
        assert.equal(typeof r.name, 'string');
        assert.equal(r.mimeType, 'application/json');
      }
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [...TEMPLATE_URIS].sort());
      for (const t of resourceTemplates) {
        assert.equal(typeof t.name, 'string');
        assert.equal(t.mimeType, 'application/json');
      }
    });

    async function read(uri) {
      const result = await client.readResource({ uri });
      assert.equal(result.contents.length, 1);
      assert.equal(result.contents[0].uri, uri);
      assert.equal(result.contents[0].mimeType, 'application/json');
      return JSON.parse(result.contents[0].text);
    }

    it('reads every resource', async () => {
      const history = await read('conversation-history://all');
      assert.equal(history.total, history.conversations.length);
      const mine = history.conversations.find((c) => c.id === state.conv.id);
      assert.ok(mine, 'the conversation is listed');
      assert.equal(mine.title, 'Code Review Session');
      assert.equal(mine.model, DEFAULT_MODEL);
      assert.equal(mine.total_tokens, state.total);
      assert.equal(mine.message_count, 3);
      assert.equal(mine.last_message, 'You are a careful code reviewer.');

      const stats = await read('token-stats://aggregate');
      assert.ok(stats.overview.total_conversations >= 3);
      for (const k of ['total_messages', 'total_input_tokens', 'total_output_tokens', 'total_cached_tokens', 'total_tokens']) {
        assert.ok(Number.isInteger(stats.overview[k]), `overview.${k}`);
      }
      assert.ok(stats.by_model[DEFAULT_MODEL].conversations >= 2);
      assert.equal(stats.by_model['gpt-4'].conversations, 1);

      const tool = (await call(client, checker, 'smart_cache', { action: 'stats' })).stats;
      const cache = await read('cache-stats://current');
      assert.equal(cache.overview.total_entries, tool.total_entries);
      assert.equal(cache.overview.total_hits, tool.total_hits);
      assert.equal(cache.overview.tokens_saved, tool.tokens_saved);
      assert.ok(cache.overview.total_entries >= 1);
      for (const k of ['total_hits', 'total_misses', 'hit_rate', 'tokens_saved', 'avg_tokens_per_entry']) {
        assert.equal(typeof cache.overview[k], 'number', `overview.${k}`);
      }
      assert.equal(typeof cache.performance.effectiveness, 'string');
      assert.ok(Array.isArray(cache.top_entries));
      assert.ok(cache.by_prefix.summaries, JSON.stringify(cache.by_prefix));
      assert.equal(cache.by_prefix.summaries.entries, 1);
      assert.ok(Array.isArray(cache.recommendations));

      const tips = await read('optimization-tips://general');
      assert.ok(tips.overview.total_conversations >= 3);
      assert.ok(tips.tips.length >= 1);
      for (const tip of tips.tips) {
        for (const k of ['category', 'priority', 'tip', 'action']) assert.equal(typeof tip[k], 'string', k);
      }
      assert.deepEqual(tips.resources.tools_available.slice(0, 6), TOOL_NAMES.slice(0, 6));

      const library = await read('reference-library://all');
      assert.equal(library.overview.total_references, 1);
      assert.equal(library.overview.total_tokens, state.ref.tokens);
      assert.deepEqual(library.overview.by_type, { code: 1 });
      assert.equal(library.references[0].id, state.ref.id);
      assert.equal(library.references[0].conversation_id, state.conv.id);
      assert.equal(typeof library.references[0].preview, 'string');
    });

    it('reads every template with a real conversation id', async () => {
      const id = state.conv.id;
      const history = await read(`conversation-history://${id}`);
      assert.equal(history.conversation.id, id);
      assert.equal(history.conversation.title, 'Code Review Session');
      assert.equal(history.conversation.total_tokens, state.total);
      assert.equal(history.messages.length, 3);
      assert.equal(history.messages[0].content, REVIEW_TEXT);
      assert.equal(history.statistics.total_user_tokens, state.messages[0].tokens);
      assert.equal(history.statistics.total_assistant_tokens, state.messages[1].tokens);
      assert.equal(typeof history.statistics.avg_tokens_per_message, 'number');

      const stats = await read(`token-stats://${id}`);
      assert.equal(stats.conversation_id, id);
      assert.equal(stats.title, 'Code Review Session');
      assert.equal(stats.model, DEFAULT_MODEL);
      assert.equal(stats.statistics.total_tokens, state.total);
      assert.equal(stats.statistics.message_count, 3);
      assert.equal(stats.timeline.length, 3);
      assert.equal(stats.timeline[2].cumulative_tokens, state.total);
      assert.equal(stats.timeline[0].message_tokens, state.messages[0].tokens);
      assert.equal(stats.token_limit.model_limit, 200000);
      assert.equal(stats.token_limit.current_usage, state.total);
      assert.equal(stats.token_limit.status, 'safe');

      const tips = await read(`optimization-tips://${id}`);
      assert.equal(tips.conversation.id, id);
      assert.equal(tips.conversation.title, 'Code Review Session');
      assert.equal(tips.conversation.model, DEFAULT_MODEL);
      assert.equal(tips.conversation.current_tokens, state.total);
      assert.equal(tips.conversation.message_count, 3);
      assert.ok(Array.isArray(tips.tips));

      const library = await read(`reference-library://${id}`);
      assert.equal(library.conversation.id, id);
      assert.equal(library.conversation.title, 'Code Review Session');
      assert.equal(library.references.length, 1);
      assert.equal(library.references[0].id, state.ref.id);
      assert.match(library.references[0].content, /^function countTokens/);
      assert.deepEqual(library.references[0].metadata, { language: 'typescript', file: 'src/utils/tokenizer.ts' });
      assert.deepEqual(library.statistics, { total_references: 1, total_tokens: state.ref.tokens, by_type: { code: 1 } });
    });

    it('unknown resources are -32002', async () => {
      await expectRpcError(client.readResource({ uri: 'conversation-history://00000000-0000-4000-8000-000000000000' }),
        -32002, 'unknown conversation');
      await expectRpcError(client.readResource({ uri: 'token-stats://no-such-id' }), -32002, 'unknown id');
      await expectRpcError(client.readResource({ uri: 'nothing://here' }), -32002, 'unknown scheme');
    });

    it('lists the three prompts and fills each from the conversation', async () => {
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name).sort(), [...PROMPT_NAMES].sort());
      const args = Object.fromEntries(prompts.map((p) => [p.name, p.arguments]));
      const required = (name) => args[name].filter((a) => a.required).map((a) => a.name);
      assert.deepEqual(args.summarize_context.map((a) => a.name).sort(), ['conversation_id', 'focus', 'max_summary_tokens']);
      assert.deepEqual(required('summarize_context'), []);
      assert.deepEqual(args.compress_conversation.map((a) => a.name).sort(),
        ['conversation_id', 'preserve_recent_count', 'target_reduction_percent']);
      assert.deepEqual(required('compress_conversation'), ['conversation_id']);
      assert.deepEqual(args.extract_essentials.map((a) => a.name).sort(), ['content', 'conversation_id', 'extract_type', 'model']);
      assert.deepEqual(required('extract_essentials'), []);

      const id = state.conv.id;
      const one = (result) => {
        assert.equal(result.messages.length, 1);
        assert.equal(result.messages[0].role, 'user');
        assert.equal(result.messages[0].content.type, 'text');
        return result.messages[0].content.text;
      };

      const summary = one(await client.getPrompt({
        name: 'summarize_context',
        arguments: { conversation_id: id, focus: 'technical decisions and code patterns', max_summary_tokens: '500' },
      }));
      assert.match(summary, /^# Conversation Summarization Request/);
      assert.ok(summary.includes('**Conversation:** Code Review Session'));
      assert.ok(summary.includes(`**Model:** ${DEFAULT_MODEL}`));
      assert.ok(summary.includes('**Messages:** 3'));
      assert.ok(summary.includes(`**Total Tokens:** ${state.total}`));
      assert.ok(summary.includes(`**Created:** ${new Date(state.conv.created_at).toISOString()}`));
      assert.ok(summary.includes(`[USER]: ${REVIEW_TEXT}`));
      assert.ok(summary.includes('[ASSISTANT]: The function is simple and correct.'));
      assert.ok(summary.includes('**Special Focus:** technical decisions and code patterns'));
      assert.ok(summary.includes('Keep summary under 500 tokens'));
      assert.ok(summary.trimEnd().endsWith('Now provide the summary:'));

      const compress = one(await client.getPrompt({
        name: 'compress_conversation',
        arguments: { conversation_id: id, target_reduction_percent: '60', preserve_recent_count: '2' },
      }));
      assert.match(compress, /^# Conversation Compression Request/);
      assert.ok(compress.includes('**Title:** Code Review Session'));
      assert.ok(compress.includes(`**Current Tokens:** ${state.total}`));
      assert.ok(compress.includes(`Reduce by 60% to ~${Math.round(state.total * 0.4)} tokens`), compress);
      assert.ok(compress.includes('The most recent 2 messages (keep verbatim)'));
      assert.ok(compress.includes(REVIEW_TEXT));
      assert.ok(compress.trimEnd().endsWith('Now compress the conversation:'));

      const defaults = one(await client.getPrompt({
        name: 'compress_conversation', arguments: { conversation_id: state.long },
      }));
      assert.ok(defaults.includes('Reduce by 50%'), 'target_reduction_percent defaults to 50');
      assert.ok(defaults.includes('The most recent 5 messages'), 'preserve_recent_count defaults to 5');

      const essentials = one(await client.getPrompt({
        name: 'extract_essentials', arguments: { conversation_id: id, extract_type: 'all' },
      }));
      assert.match(essentials, /^# Essential Information Extraction/);
      assert.ok(essentials.includes('**Title:** Code Review Session'));
      assert.ok(essentials.includes(`**Tokens:** ${state.total}`));
      assert.ok(essentials.includes(REVIEW_TEXT));
      assert.ok(essentials.trimEnd().endsWith('Now extract the essential information:'));

      const direct = one(await client.getPrompt({
        name: 'extract_essentials',
        arguments: { content: 'We decided to use LMDB. The API listens on port 6789.', extract_type: 'decisions' },
      }));
      assert.ok(direct.includes('We decided to use LMDB. The API listens on port 6789.'));
    });

    it('prompt errors are -32602', async () => {
      await expectRpcError(client.getPrompt({ name: 'compress_conversation', arguments: {} }), -32602,
        'missing required argument');
      await expectRpcError(client.getPrompt({ name: 'no_such_prompt', arguments: {} }), -32602, 'unknown prompt');
      await expectRpcError(client.getPrompt({
        name: 'compress_conversation', arguments: { conversation_id: '00000000-0000-4000-8000-000000000000' },
      }), -32602, 'unknown conversation');
      await expectRpcError(client.getPrompt({
        name: 'compress_conversation', arguments: { conversation_id: state.conv.id, target_reduction_percent: 'lots' },
      }), -32602, 'unparsable number');
    });

    it('completes prompt arguments and template variables', async () => {
      const id = state.conv.id;
      const prompt = await client.complete({
        ref: { type: 'ref/prompt', name: 'compress_conversation' },
        argument: { name: 'conversation_id', value: id.slice(0, 6) },
      });
      assert.ok(prompt.completion.values.includes(id), JSON.stringify(prompt));
      assert.ok(prompt.completion.values.every((v) => v.startsWith(id.slice(0, 6))));
      assert.ok(prompt.completion.values.length <= 100);

      const all = await client.complete({
        ref: { type: 'ref/prompt', name: 'summarize_context' },
        argument: { name: 'conversation_id', value: '' },
      });
      for (const c of [state.conv.id, state.gpt.id, state.long]) assert.ok(all.completion.values.includes(c));

      for (const uri of TEMPLATE_URIS) {
        const template = await client.complete({
          ref: { type: 'ref/resource', uri },
          argument: { name: 'conversation_id', value: id.slice(0, 4) },
        });
        assert.ok(template.completion.values.includes(id), `${uri}: ${JSON.stringify(template)}`);
      }

      const kind = await client.complete({
        ref: { type: 'ref/prompt', name: 'extract_essentials' },
        argument: { name: 'extract_type', value: 'c' },
      });
      assert.deepEqual(kind.completion.values, ['code']);

      const none = await client.complete({
        ref: { type: 'ref/prompt', name: 'compress_conversation' },
        argument: { name: 'conversation_id', value: 'zzzz' },
      });
      assert.deepEqual(none.completion.values, []);

      await expectRpcError(client.complete({
        ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'x', value: '' },
      }), -32602, 'completion for an unknown prompt');
    });

    it('unknown methods are -32601 and unknown tools -32602', async () => {
      await expectRpcError(client.request({ method: 'tools/frobnicate', params: {} }, z.object({}).loose()),
        -32601, 'unknown method');
      await expectRpcError(client.callTool({ name: 'no_such_tool', arguments: {} }), -32602, 'unknown tool');
      await expectRpcError(client.request({ method: 'resources/list', params: { cursor: 'not-a-cursor' } },
        z.object({}).loose()), -32602, 'bad cursor');
      await expectRpcError(client.request({ method: 'logging/setLevel', params: { level: 'loud' } },
        z.object({}).loose()), -32602, 'bad log level');
      await client.ping();
    });

    it('logging/setLevel debug makes tool calls log', async () => {
      const logs = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
      await client.setLoggingLevel('debug');
      await call(client, checker, 'manage_conversation', { action: 'create', title: 'Logged' });
      await waitUntil(() => logs.length > 0, 5000, 'notifications/message after setLevel debug');
      for (const entry of logs) {
        assert.ok(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].includes(entry.level));
        assert.ok(entry.data !== undefined);
      }
      // Raised to error: routine calls log nothing more.
      await client.setLoggingLevel('error');
      await sleep(100);
      const count = logs.length;
      await call(client, checker, 'manage_conversation', { action: 'create', title: 'Quiet' });
      await call(client, checker, 'count_tokens', { input: 'quiet please' });
      await sleep(200);
      assert.equal(logs.length, count, `no messages below error: ${JSON.stringify(logs.slice(count))}`);
    });

    it('the client saw no malformed or unexpected messages', () => {
      assert.deepEqual(h.errors.map(String), []);
    });
  });

  describe('progress and cancellation', () => {
    let h;
    let tools;
    let checker;
    let fullMs = 0;
    const big = manyMessages(200000);

    before(async () => {
      // 200,000 messages are about 13 MB of JSON: above the HTTP default
      // body limit of 8 MiB.
      h = await connect({ config: { max_body_bytes: 64 << 20 } });
      tools = (await h.client.listTools()).tools;
      checker = new OutputChecker(tools);
    });
    after(async () => {
      await h?.close();
    });

    it('a long count_tokens call reports progress', async () => {
      const progress = [];
      const started = Date.now();
      const result = await h.client.callTool({ name: 'count_tokens', arguments: { input: big, model: 'gpt-4o' } },
        undefined, { onprogress: (p) => progress.push(p), timeout: 300000 });
      fullMs = Date.now() - started;
      const doc = toolDoc(result);
      checker.check('count_tokens', doc);
      assert.equal(doc.success, true);
      assert.ok(doc.tokens > 200000 * 10, `tokens ${doc.tokens}`);
      assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
      // Spaced by work, not time: at least a hundredth of the total apart.
      for (let i = 1; i < progress.length; i++) {
        assert.ok(progress[i].progress - progress[i - 1].progress >= 200000 / 100, 'progress increases by steps');
      }
      for (const p of progress) {
        assert.equal(p.total, 200000);
        assert.ok(p.progress <= p.total);
      }
    });

    it('an aborted call gets no response and the session goes on', async () => {
      const controller = new AbortController();
      let progressed = 0;
      const pending = h.client.callTool({ name: 'count_tokens', arguments: { input: big, model: 'gpt-4o' } },
        undefined, {
          signal: controller.signal,
          timeout: 300000,
          onprogress: () => {
            progressed++;
            if (progressed === 1) controller.abort('user pressed stop');
          },
        });
      await assert.rejects(pending, (error) => {
        assert.match(String(error?.message ?? error), /stop|abort/i);
        return true;
      });
      assert.ok(progressed >= 1, 'the call was running when aborted');
      const abortedAt = Date.now();
      // The server would have answered within the time of a full call; a
      // response to the cancelled id shows up as "unknown message ID".
      await sleep(Math.min(Math.max(fullMs, 500), 20000));
      await h.client.ping();
      assert.ok(Date.now() - abortedAt < 60000);
      const late = h.errors.filter((e) => /unknown message ID/i.test(String(e?.message)));
      assert.deepEqual(late.map(String), [], 'no response to the cancelled request');
      const doc = await call(h.client, checker, 'count_tokens', { input: 'still serving' });
      assert.ok(doc.tokens > 0);
      // A progress notification the server sent before the cancellation
      // reached it may still arrive (it then names a token the client has
      // dropped); anything else is unexpected.
      const unexpected = h.errors.map(String).filter((e) => !/progress notification for an unknown token/.test(e));
      assert.deepEqual(unexpected, [], 'the client saw no malformed or unexpected messages');
    });
  });

  describe('pagination (page_size 2)', () => {
    let paged;
    let plain;

    before(async () => {
      [paged, plain] = await Promise.all([connect({ config: { page_size: 2 } }), connect()]);
    });
    after(async () => {
      await Promise.all([paged?.close(), plain?.close()]);
    });

    async function collect(method, key) {
      const items = [];
      let cursor;
      let pages = 0;
      do {
        const params = cursor === undefined ? {} : { cursor };
        const page = await paged.client[method](params);
        assert.ok(page[key].length <= 2, `${method} page of at most 2`);
        items.push(...page[key]);
        cursor = page.nextCursor;
        pages++;
        assert.ok(pages < 20, 'pagination ends');
      } while (cursor !== undefined);
      return { items, pages };
    }

    for (const [method, key, count] of [
      ['listTools', 'tools', TOOL_NAMES.length],
      ['listResources', 'resources', 5],
      ['listResourceTemplates', 'resourceTemplates', 4],
      ['listPrompts', 'prompts', 3],
    ]) {
      it(`${method} pages through all ${count} items`, async () => {
        const { items, pages } = await collect(method, key);
        assert.equal(pages, Math.ceil(count / 2));
        const whole = await plain.client[method]({});
        assert.equal(whole.nextCursor, undefined);
        assert.equal(whole[key].length, count);
        assert.deepEqual(items, whole[key]);
      });
    }

    it('a bad cursor is -32602', async () => {
      const first = await paged.client.listTools({});
      assert.equal(typeof first.nextCursor, 'string');
      for (const cursor of ['garbage', `${first.nextCursor}x`, '']) {
        for (const method of ['tools/list', 'resources/list', 'prompts/list', 'resources/templates/list']) {
          await expectRpcError(paged.client.request({ method, params: { cursor } }, z.object({}).loose()),
            -32602, `${method} cursor ${JSON.stringify(cursor)}`);
        }
      }
    });
  });
}
