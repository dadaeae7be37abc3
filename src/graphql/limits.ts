// Bounds on GraphQL operations, the same over HTTP and graphql-ws: the nesting of the query text (checked
// before parsing: the parser recurses), its token count, the depth of selections (fragments expanded) and
// an estimated cost (fields times the page sizes around them). Every refusal carries extensions.errcode
// (M_TOO_LARGE) and HTTP status 400. The GraphQL face's answer to "deep queries" in issue 11.
import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValueNode,
} from "graphql";
import { MAX_JSON_DEPTH } from "../domain/json-limits.ts";

/** Deepest selection nesting (viewer → rooms → edges → node → timeline → edges → node → field is 8). */
export const MAX_QUERY_DEPTH = 15;
/** Most tokens a document may have (graphql-js's parse option). */
export const MAX_QUERY_TOKENS = 5_000;
/** Largest estimated cost: each field counts once per item of every page around it. */
export const MAX_QUERY_COST = 100_000;
/** Bracket nesting of the text: selections plus a JSON literal at the JSON bound, with margin. */
const MAX_TEXT_NESTING = MAX_QUERY_DEPTH + MAX_JSON_DEPTH + 10;
/** Arguments that size a page, and the page size assumed when a list field has none. */
const PAGE_ARGS = ["first", "last", "limit"];
const DEFAULT_PAGE = 20;
const MAX_PAGE = 1000;

export const PARSE_OPTIONS = { maxTokens: MAX_QUERY_TOKENS } as const;

function tooLarge(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { errcode: "M_TOO_LARGE", code: "TOO_LARGE", http: { status: 400 } } });
}

/**
 * Refuses query text whose brackets nest deeper than the parser may safely recurse, read from the text
 * (strings, block strings and comments skipped). Undefined when the text is within bounds.
 */
export function checkQueryText(query: string): GraphQLError | undefined {
  let depth = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === "#") {
      while (i < query.length && query[i] !== "\n") i++;
    } else if (c === '"') {
      if (query.startsWith('"""', i)) {
        const end = query.indexOf('"""', i + 3);
        i = end < 0 ? query.length : end + 2;
      } else {
        for (i++; i < query.length && query[i] !== '"' && query[i] !== "\n"; i++) if (query[i] === "\\") i++;
      }
    } else if (c === "{" || c === "[" || c === "(") {
      if (++depth > MAX_TEXT_NESTING) return tooLarge(`The query nests brackets more than ${MAX_TEXT_NESTING} levels deep`);
    } else if (c === "}" || c === "]" || c === ")") depth--;
  }
  return undefined;
}

/** Validation rule: no operation selects deeper than MAX_QUERY_DEPTH (fragments expanded). */
export function depthLimitRule(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of context.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const deepest = (set: SelectionSetNode, depth: number, seen: Set<string>): number => {
    if (depth > MAX_QUERY_DEPTH) return depth;
    let max = depth;
    for (const sel of set.selections) {
      let d = depth;
      if (sel.kind === Kind.FIELD) d = sel.selectionSet ? deepest(sel.selectionSet, depth + 1, seen) : depth + 1;
      else if (sel.kind === Kind.INLINE_FRAGMENT) d = deepest(sel.selectionSet, depth, seen);
      else {
        const f = fragments.get(sel.name.value);
        // A fragment cycle is NoFragmentCyclesRule's to report.
        if (f && !seen.has(f.name.value)) d = deepest(f.selectionSet, depth, new Set([...seen, f.name.value]));
      }
      if (d > max) max = d;
      if (max > MAX_QUERY_DEPTH) break;
    }
    return max;
  };
  return {
    OperationDefinition(op) {
      if (deepest(op.selectionSet, 0, new Set()) > MAX_QUERY_DEPTH) {
        context.reportError(new GraphQLError(`The query selects more than ${MAX_QUERY_DEPTH} levels deep`, { nodes: op, extensions: { errcode: "M_TOO_LARGE", http: { status: 400 } } }));
      }
    },
  };
}

function intValue(node: ValueNode | undefined, variables: Record<string, unknown>): number | undefined {
  if (!node) return undefined;
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.VARIABLE) {
    const v = variables[node.name.value];
    return typeof v === "number" ? v : undefined;
  }
  return undefined;
}

/**
 * The estimated cost of the operation a request runs: every field counts 1, times the page size of each
 * list field around it (its first/last/limit argument, else its default, else DEFAULT_PAGE; at most
 * MAX_PAGE). Runs on a validated document.
 */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> = {}): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    else if (d.kind === Kind.OPERATION_DEFINITION && (operationName ? d.name?.value === operationName : operation === undefined)) operation = d;
  }
  if (!operation) return 0;
  const root = operation.operation === "query" ? schema.getQueryType() : operation.operation === "mutation" ? schema.getMutationType() : schema.getSubscriptionType();
  if (!root) return 0;

  // `paged`: directly under a field that took a page size (a connection's `edges` list is that page).
  const costOf = (type: GraphQLCompositeType, set: SelectionSetNode, depth: number, paged: boolean): number => {
    if (depth > MAX_QUERY_DEPTH) return 0; // refused by the depth rule; also ends fragment cycles
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) total += fieldCost(type, sel, depth, paged);
      else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type;
        if (t && (isObjectType(t) || isInterfaceType(t))) total += costOf(t, sel.selectionSet, depth, paged);
      } else {
        const f = fragments.get(sel.name.value);
        const t = f && schema.getType(f.typeCondition.name.value);
        if (f && t && (isObjectType(t) || isInterfaceType(t))) total += costOf(t, f.selectionSet, depth + 1, paged);
      }
      if (total > MAX_QUERY_COST) return total;
    }
    return total;
  };
  const fieldCost = (parent: GraphQLCompositeType, node: FieldNode, depth: number, paged: boolean): number => {
    if (!isObjectType(parent) && !isInterfaceType(parent)) return 1;
    const def = parent.getFields()[node.name.value];
    if (!def) return 1;
    const named = getNamedType(def.type);
    const isList = isListType(getNullableType(def.type));
    let page = 1;
    const pageArg = def.args.find((a) => PAGE_ARGS.includes(a.name));
    if (pageArg) {
      const given = intValue(node.arguments?.find((a) => a.name.value === pageArg.name)?.value, variables);
      page = given ?? (typeof pageArg.defaultValue === "number" ? pageArg.defaultValue : DEFAULT_PAGE);
    } else if (isList && !paged) page = DEFAULT_PAGE;
    page = Math.min(Math.max(page, 1), MAX_PAGE);
    if (!node.selectionSet || !(isObjectType(named) || isInterfaceType(named))) return 1;
    return 1 + page * costOf(named, node.selectionSet, depth + 1, pageArg !== undefined);
  };
  return costOf(root, operation.selectionSet, 0, false);
}

/** The cost check: an error when the operation costs more than MAX_QUERY_COST. */
export function checkCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined): GraphQLError | undefined {
  const cost = operationCost(schema, document, operationName, variables ?? {});
  return cost > MAX_QUERY_COST ? tooLarge(`The query would cost about ${cost} (at most ${MAX_QUERY_COST}): ask for smaller pages or fewer fields`) : undefined;
}

/**
 * The rules above in words, for the schema's documentation (the Query type's description): what
 * introspection tells a client about the bounds its operations must keep.
 */
export const LIMITS_DOC =
  "Limits on every operation, over HTTP and WebSocket alike (a refusal is errcode M_TOO_LARGE, code TOO_LARGE): " +
  `at most ${MAX_QUERY_TOKENS} tokens in the document; selections at most ${MAX_QUERY_DEPTH} levels deep (fragments expanded); ` +
  `an estimated cost of at most ${MAX_QUERY_COST}, where each field counts 1 times the page size of every list around it ` +
  `(a list's first/last/limit argument, else its default, else ${DEFAULT_PAGE}; at most ${MAX_PAGE}); ` +
  `brackets nested at most ${MAX_TEXT_NESTING} deep in the text.`;
