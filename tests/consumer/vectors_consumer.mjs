// mqspec vectors, consumed from JavaScript (Node 20, no dependencies).
//
// An implementer's view of mqspec's published contract, written from the vectors' README, the
// published JSON Schemas and the MS-MQSD specification, without mqspec's Python code:
//   1. every JSON file of the tree (and every line of every trace) validates against the schema
//      the tree publishes for it, with the small validator below (the JSON Schema keywords the
//      schemas use);
//   2. 64-bit fidelity: no JSON number in the tree lies outside JavaScript's exact integers
//      (every 64-bit value is a decimal string), and each such string reads back exactly as a BigInt;
//   3. every MS-MQSD codec vector is decoded by the MS-MQSD decoder below: a valid case gives
//      expected.json field for field, an invalid case is refused at the field, offset and section
//      its error.json names.
//
// Usage: node vectors_consumer.mjs VECTORS_DIR   (prints a JSON summary; exit status 0 when all pass, 1 if not)

import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = process.argv[2];
if (!root) {
  console.error("usage: node vectors_consumer.mjs VECTORS_DIR");
  process.exit(2);
}
const failures = [];
const counts = { json_files: 0, trace_lines: 0, numbers: 0, wide_values: 0, mqsd_valid: 0, mqsd_invalid: 0 };
const fail = (where, what) => { if (failures.length < 200) failures.push(`${where}: ${what}`); };

// --------------------------------------------------------------------------- a JSON Schema subset

function resolve(rootSchema, ref) {
  if (!ref.startsWith("#/")) throw new Error(`only local $ref is supported, not ${ref}`);
  return ref.slice(2).split("/").reduce((node, part) => node[part], rootSchema);
}

function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v; // string, boolean, object
}

function hasType(v, t) {
  const actual = typeOf(v);
  return actual === t || (t === "number" && actual === "integer");
}

const patterns = new Map();
function regex(p) {
  if (!patterns.has(p)) patterns.set(p, new RegExp(p, "u"));
  return patterns.get(p);
}

// The ways `value` breaks `schema` (an empty list when it is valid).
function errors(value, schema, rootSchema, where) {
  if (schema === true) return [];
  if (schema === false) return [`${where}: not allowed`];
  const out = [];
  if (schema.$ref) out.push(...errors(value, resolve(rootSchema, schema.$ref), rootSchema, where));
  if (schema.allOf) for (const s of schema.allOf) out.push(...errors(value, s, rootSchema, where));
  if (schema.anyOf && !schema.anyOf.some((s) => errors(value, s, rootSchema, where).length === 0)) {
    out.push(`${where}: matches none of anyOf`);
  }
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((s) => errors(value, s, rootSchema, where).length === 0).length;
    if (matching !== 1) out.push(`${where}: matches ${matching} alternatives of oneOf`);
  }
  if (schema.not && errors(value, schema.not, rootSchema, where).length === 0) out.push(`${where}: matches not`);
  if (schema.if) {
    const branch = errors(value, schema.if, rootSchema, where).length === 0 ? schema.then : schema.else;
    if (branch !== undefined) out.push(...errors(value, branch, rootSchema, where));
  }
  if ("const" in schema && JSON.stringify(value) !== JSON.stringify(schema.const)) {
    out.push(`${where}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    out.push(`${where}: ${JSON.stringify(value)} is not one of the enumerated values`);
  }
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => hasType(value, t))) return [...out, `${where}: expected ${types.join(" or ")}, not ${typeOf(value)}`];
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && [...value].length < schema.minLength) out.push(`${where}: too short`);
    if (schema.pattern !== undefined && !regex(schema.pattern).test(value)) {
      out.push(`${where}: ${JSON.stringify(value).slice(0, 60)} does not match ${schema.pattern}`);
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) out.push(`${where}: ${value} is below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) out.push(`${where}: ${value} is above ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => out.push(...errors(item, schema.items, rootSchema, `${where}[${i}]`)));
  }
  if (typeOf(value) === "object") {
    const size = Object.keys(value).length;
    if (schema.minProperties !== undefined && size < schema.minProperties) out.push(`${where}: too few keys`);
    if (schema.maxProperties !== undefined && size > schema.maxProperties) out.push(`${where}: too many keys`);
    for (const key of schema.required || []) if (!(key in value)) out.push(`${where}: missing ${JSON.stringify(key)}`);
    const props = schema.properties || {};
    const patternProps = Object.entries(schema.patternProperties || {});
    for (const [key, item] of Object.entries(value)) {
      if (schema.propertyNames) out.push(...errors(key, schema.propertyNames, rootSchema, `${where} key ${key}`));
      let known = false;
      if (key in props) { known = true; out.push(...errors(item, props[key], rootSchema, `${where}.${key}`)); }
      for (const [p, s] of patternProps) {
        if (regex(p).test(key)) { known = true; out.push(...errors(item, s, rootSchema, `${where}.${key}`)); }
      }
      if (!known && schema.additionalProperties !== undefined) {
        out.push(...errors(item, schema.additionalProperties, rootSchema, `${where}.${key}`));
      }
    }
  }
  return out;
}

// --------------------------------------------------------------------------- 64-bit fidelity

// Every number token of a JSON text (outside strings), as written: JSON.parse would already have rounded it.
function numberTokens(text) {
  const found = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      let j = i + 1;
      while (j < text.length && /[0-9eE.+-]/.test(text[j])) j++;
      found.push(text.slice(i, j));
      i = j - 1;
    }
  }
  return found;
}

const U64 = /^(0|[1-9][0-9]{0,19})$/;
// the keys that hold sequence numbers in the vectors' files and trace lines
const SEQ_KEY = /(^|_)seq$|seq_number$/;
const MAX_U64 = (1n << 64n) - 1n;
let largestWide = 0n;

function checkNumbers(text, where) {
  for (const token of numberTokens(text)) {
    counts.numbers++;
    if (/^-?[0-9]+$/.test(token) && !Number.isSafeInteger(Number(token))) {
      fail(where, `the number ${token} is beyond 2^53: a JSON reader rounds it (${Number(token)})`);
    }
  }
}

// The 64-bit values (decimal strings) under the keys that hold sequence numbers, each read as a BigInt.
function checkWide(value, where) {
  if (Array.isArray(value)) return value.forEach((v, i) => checkWide(v, `${where}[${i}]`));
  if (typeOf(value) !== "object") return;
  for (const [key, item] of Object.entries(value)) {
    if (SEQ_KEY.test(key) && item !== null && typeof item !== "object") {
      counts.wide_values++;
      if (typeof item !== "string" || !U64.test(item)) {
        fail(`${where}.${key}`, `a sequence number is a decimal string, not ${JSON.stringify(item)}`);
      } else {
        const big = BigInt(item);
        if (big > MAX_U64) fail(`${where}.${key}`, `${item} is beyond 2^64 - 1`);
        if (big.toString() !== item) fail(`${where}.${key}`, `${item} does not read back exactly`);
        if (big > largestWide) largestWide = big;
      }
    } else {
      checkWide(item, `${where}.${key}`);
    }
  }
}

// --------------------------------------------------------------------------- the tree

const readText = (rel) => readFileSync(join(root, rel), "utf8");
const schemas = {};
for (const name of readdirSync(root)) {
  if (name.endsWith(".schema.json")) schemas[name] = JSON.parse(readText(name));
}
for (const needed of ["manifest.schema.json", "handler.schema.json", "message.schema.json", "error.schema.json",
                      "index.schema.json", "propids.schema.json", "trace.schema.json", "scenario-result.schema.json",
                      "scenario.schema.json", "vocabulary.schema.json"]) {
  if (!schemas[needed]) fail(needed, "the tree publishes no such schema");
}

function validate(value, schemaName, where, def) {
  const schema = schemas[schemaName];
  if (!schema) return;
  const target = def ? { $ref: `#/$defs/${def}` } : schema;
  for (const problem of errors(value, target, schema, where)) fail(where, problem);
}

// which schema each file of a case follows (the README's layout)
const HANDLER_DEFS = { "pre.json": "state", "post.json": "state", "event.json": "event", "effects.json": "effects" };

function schemaOf(kind, file, manifest) {
  if (file === "manifest.json") return ["manifest.schema.json"];
  if (kind === "codec") return file === "expected.json" ? ["message.schema.json"] : ["error.schema.json"];
  if (kind === "handler") return ["handler.schema.json", HANDLER_DEFS[file]];
  if (kind === "scenario") return [file === "scenario.json" ? "scenario.schema.json" : "scenario-result.schema.json"];
  throw new Error(`no schema for ${kind} ${file}`);
}

// a scenario file is input to mqspec in its own language (its conditions may hold sequence numbers as
// "OP N" text): its numbers are checked, its keys are not read as sequence numbers
function readJson(rel, schemaName, def, wide = true) {
  const text = readText(rel);
  counts.json_files++;
  checkNumbers(text, rel);
  const value = JSON.parse(text);
  if (wide) checkWide(value, rel);
  validate(value, schemaName, rel, def);
  return value;
}

const index = readJson("index.json", "index.schema.json");
readJson("propids.json", "propids.schema.json");
readJson("vocabulary.json", "vocabulary.schema.json", undefined, false);  // its texts name fields, not values
for (const entry of index.cases) {
  const manifest = readJson(join(entry.case, "manifest.json"), "manifest.schema.json");
  for (const file of manifest.files) {
    const rel = join(entry.case, file);
    if (file.endsWith(".bin")) continue;
    if (file.endsWith(".ndjson")) {
      const text = readText(rel);
      checkNumbers(text, rel);
      text.split("\n").filter((line) => line.trim()).forEach((line, i) => {
        counts.trace_lines++;
        const record = JSON.parse(line);
        checkWide(record, `${rel}:${i + 1}`);
        validate(record, "trace.schema.json", `${rel}:${i + 1}`);
      });
      continue;
    }
    const [schemaName, def] = schemaOf(manifest.kind, file, manifest);
    readJson(rel, schemaName, def, file !== "scenario.json");
  }
}
// every file of the tree is listed by a manifest or is a top file
const listed = new Set(["VERSION", "README.md", "index.json", "propids.json", "vocabulary.json",
                        ...Object.keys(schemas)]);
for (const entry of index.cases) {
  listed.add(join(entry.case, "manifest.json"));
  for (const file of JSON.parse(readText(join(entry.case, "manifest.json"))).files) listed.add(join(entry.case, file));
}
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (!listed.has(relative(root, path))) fail(relative(root, path), "a file no manifest lists");
  }
})(root);

// --------------------------------------------------------------------------- an MS-MQSD decoder, from the text

class DecodeError extends Error {
  constructor(field, offset, section, reason) {
    super(`${field} at ${offset} (MS-MQSD ${section}): ${reason}`);
    Object.assign(this, { field, offset, section });
  }
}

const u32 = (b, at) => b.readUInt32LE(at);
// a GUID in the [MS-DTYP] layout: Data1, Data2, Data3 little-endian, Data4 as bytes
function guid(b, at) {
  const hex = (from, to) => b.subarray(from, to).toString("hex");
  const le = (from, to) => Buffer.from(b.subarray(from, to)).reverse().toString("hex");
  return `${le(at, at + 4)}-${le(at + 4, at + 6)}-${le(at + 6, at + 8)}-${hex(at + 8, at + 10)}-${hex(at + 10, at + 16)}`;
}

function truncated(b, layout, section) {
  for (const [field, offset, size] of layout) {
    if (offset + size > b.length) throw new DecodeError(field, offset, section, `needs ${size} bytes`);
  }
}

const HEADER = [["TopologyPacketHeader.Version", 0, 1], ["TopologyPacketHeader.Type", 1, 1],
                ["TopologyPacketHeader.Reserved", 2, 2]];

// 2.2.1: Type says what follows; "MQSD clients MUST set all bit positions to 0" (Version) and Reserved
// "MUST be set to 0x0000": a strict reader checks both, a lenient one (a server; E-020) ignores them
function header(b, lenient) {
  truncated(b, HEADER, "2.2.1");
  const type = b[1];
  if (type !== 1 && type !== 2) throw new DecodeError("TopologyPacketHeader.Type", 1, "2.2.1", `type ${type}`);
  if (!lenient && b[0] !== 0) throw new DecodeError("TopologyPacketHeader.Version", 0, "2.2.1", "MUST be 0");
  if (!lenient && b.readUInt16LE(2) !== 0) throw new DecodeError("TopologyPacketHeader.Reserved", 2, "2.2.1", "MUST be 0");
  return type;
}

const REQUEST = [["TopologyClientRequest.EnterpriseID", 4, 16], ["TopologyClientRequest.RequestID", 20, 16],
                 ["TopologyClientRequest.SiteID", 36, 16], ["TopologyClientRequest.IPXNetworkCount", 52, 4]];

// 2.2.2: 52 bytes over IP, 56 + 4 * IPXNetworkCount over IPX (count 1..32); leniently (3.2.5.1) a
// request shorter than the IPX form with one entry is the IP form
function request(b, lenient) {
  const message = { message: "TopologyClientRequest" };
  if (b.length < 52) truncated(b, REQUEST, "2.2.2");
  Object.assign(message, { enterprise_id: guid(b, 4), request_id: guid(b, 20), site_id: guid(b, 36),
                           ipx_network_numbers: [] });
  if (b.length === 52 || (lenient && b.length < 60)) return message;
  truncated(b, REQUEST, "2.2.2");
  const count = u32(b, 52);
  if (count < 1 || count > 32) throw new DecodeError("TopologyClientRequest.IPXNetworkCount", 52, "2.2.2", "1 to 32");
  if (count > Math.floor((b.length - 56) / 4)) {
    throw new DecodeError("TopologyClientRequest.IPXNetworkCount", 52, "2.2.2", "beyond the bytes");
  }
  const end = 56 + 4 * count;
  if (end !== b.length) throw new DecodeError("TopologyClientRequest", end, "2.2.2", "trailing bytes");
  for (let at = 56; at < end; at += 4) message.ipx_network_numbers.push(u32(b, at));
  return message;
}

const REPLY = [["TopologyServerReply.CorrelationID", 4, 16], ["TopologyServerReply.ConnectedNetworkCount", 20, 4],
               ["TopologyServerReply.ConnectedNetworkMask", 24, 4],
               ["TopologyServerReply.DirectoryServiceServerSize", 28, 4]];

const popcount = (n) => n.toString(2).split("").filter((c) => c === "1").length;

// 2.2.3 and the ABNF of DirectoryServiceServerArray
function reply(b) {
  truncated(b, REPLY, "2.2.3");
  const count = u32(b, 20), mask = u32(b, 24), size = u32(b, 28);
  if (count < 1 || count > 32) throw new DecodeError("TopologyServerReply.ConnectedNetworkCount", 20, "2.2.3", "1 to 32");
  if (mask !== 0 && popcount(mask) !== count) {
    throw new DecodeError("TopologyServerReply.ConnectedNetworkMask", 24, "2.2.3", "popcount");
  }
  if (size & 1) throw new DecodeError("TopologyServerReply.DirectoryServiceServerSize", 28, "2.2.3", "odd size");
  let at = 32;
  if (count > Math.floor((b.length - at) / 16)) {
    throw new DecodeError("TopologyServerReply.ConnectedNetworkCount", 20, "2.2.3", "beyond the bytes");
  }
  const networks = [];
  for (let i = 0; i < count; i++, at += 16) networks.push(guid(b, at));
  const message = { message: "TopologyServerReply", correlation_id: guid(b, 4), connected_networks: networks,
                    connected_network_mask: mask, responding_site_id: null, servers: [] };
  if (size === 0) {
    if (at !== b.length) throw new DecodeError("TopologyServerReply", at, "2.2.3", "trailing bytes");
    return message;
  }
  if (b.length - at < 16) throw new DecodeError("TopologyServerReply.RespondingSiteID", at, "2.2.3", "missing");
  message.responding_site_id = guid(b, at);
  at += 16;
  const left = b.length - at;
  if (left < size) throw new DecodeError("TopologyServerReply.DirectoryServiceServerSize", 28, "2.2.3", "beyond");
  if (left > size) {
    const endsAt = (end) => end - at >= 2 && !((end - at) & 1) && b[end - 2] === 0 && b[end - 1] === 0;
    if (endsAt(b.length) && !endsAt(at + size)) {
      // the array runs to the end of the datagram: the size does not count its bytes
      throw new DecodeError("TopologyServerReply.DirectoryServiceServerSize", 28, "2.2.3", "not the array's bytes");
    }
    throw new DecodeError("TopologyServerReply", at + size, "2.2.3", "trailing bytes");
  }
  message.servers = serverArray(b.subarray(at, at + size), at);
  return message;
}

// DirectoryServiceServerArray = Entry 0*ContinuedEntry EndList; Entry = IP IPX 1*NameChar
function serverArray(a, base) {
  const ARRAY = "DirectoryServiceServerArray";
  if (a.length & 1) throw new DecodeError(`${ARRAY}.EndList`, base + a.length - 1, "2.2.3", "half a character");
  const units = [];
  for (let i = 0; i < a.length; i += 2) units.push(a.readUInt16LE(i));
  const end = units.indexOf(0);
  if (end < 0) throw new DecodeError(`${ARRAY}.EndList`, base + a.length, "2.2.3", "no EndList");
  if (end !== units.length - 1) throw new DecodeError(`${ARRAY}.EndList`, base + 2 * end + 2, "2.2.3", "bytes follow");
  const servers = [];
  let start = 0;
  const body = units.slice(0, end);
  const entries = [];
  for (let i = 0; i <= body.length; i++) {
    if (i === body.length || body[i] === 0x2c) { entries.push([start, body.slice(start, i)]); start = i + 1; }
  }
  for (const [first, entry] of entries) {
    const at = base + 2 * first;
    for (const [k, part] of [[0, "IP"], [1, "IPX"]]) {
      if (entry[k] !== 0x30 && entry[k] !== 0x31) throw new DecodeError(`Entry.${part}`, at + 2 * k, "2.2.3", "not 0 or 1");
    }
    if (entry.length < 3) throw new DecodeError("Entry.NameChar", at + 4, "2.2.3", "an empty name");
    const name = String.fromCharCode(...entry.slice(2));
    servers.push({ name, ip: entry[0] === 0x31, ipx: entry[1] === 0x31 });
  }
  return servers;
}

function decodeMqsd(b, lenient) {
  // the header says what follows (and throws when it is cut short or names no packet)
  return header(b, lenient) === 1 ? request(b, lenient) : reply(b);
}

const sameJson = (a, b) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeOf(v) !== "object") return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}

for (const entry of index.cases) {
  if (!entry.case.startsWith("codec/mqsd/")) continue;
  const manifest = JSON.parse(readText(join(entry.case, "manifest.json")));
  const data = readFileSync(join(root, entry.case, "input.bin"));
  let decoded, error;
  try {
    decoded = decodeMqsd(data, manifest.lenient);
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    error = e;
  }
  if (manifest.outcome === "valid") {
    counts.mqsd_valid++;
    const expected = JSON.parse(readText(join(entry.case, "expected.json")));
    if (error) fail(entry.case, `refused: ${error.message}`);
    else if (!sameJson(decoded, expected)) fail(entry.case, `decodes to ${JSON.stringify(decoded)}`);
  } else {
    counts.mqsd_invalid++;
    const want = JSON.parse(readText(join(entry.case, "error.json")));
    if (!error) fail(entry.case, "decodes, but the case is invalid");
    else if (error.field !== want.field || error.offset !== want.offset || error.section !== want.section) {
      fail(entry.case, `refused at ${error.field} ${error.offset} ${error.section}, the vector says ` +
                       `${want.field} ${want.offset} ${want.section}`);
    }
  }
}

if (counts.mqsd_valid === 0 || counts.mqsd_invalid === 0) fail(root, "no MS-MQSD codec vectors were read");
if (largestWide <= BigInt(Number.MAX_SAFE_INTEGER)) {
  fail(root, "no sequence number above 2^53 in the tree: 64-bit fidelity was not exercised");
}
const summary = { ok: failures.length === 0, counts, largest_sequence_number: largestWide.toString(), failures };
console.log(JSON.stringify(summary, null, 2));
process.exit(failures.length === 0 ? 0 : 1);
