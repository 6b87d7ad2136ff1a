// The parser guard: a GraphQL document with too many tokens, or brackets nested too deep, is
// refused by counting its tokens with the lexer before graphql's parser is handed it (POST, GET
// and subscriptions alike), so a flood of oversized documents never builds their trees.
import { GraphQLError, Lexer, Source, TokenKind } from 'graphql'

/**
 * A document longer than this many tokens is refused before it is parsed: it is ten times
 * GraphiQL's introspection query.
 */
export const MAX_TOKENS = 4_000

/**
 * Brackets ({, ( and [) open at once, at most. graphql's parser recurses once per level and
 * overflows the stack near 2,000 (`{a{a{a...` fits 1,999 levels in 4,000 tokens): the depth rule
 * refuses past GRAPHQL_MAX_DEPTH anyway, but only once the parser has built the document.
 */
export const MAX_NESTING = 500

/**
 * The refusal of a document beyond what the parser should be handed: more than `maxTokens`
 * tokens, or brackets nested past MAX_NESTING; undefined otherwise (or when it does not lex: the
 * parser then reports where). Counted with the lexer alone, each token let go as the next is read.
 *
 * graphql's parser has a `maxTokens` of its own, but stops only after building the tree of
 * everything before: under a flood of 4,200-token documents those trees outlived the young
 * generation and filled the old one, and refusals took up to 80 ms (npm run bench:graphql-abuse,
 * docs/decisions/0033-graphql-routes.md). A document of at most MAX_NESTING characters can hold neither too many
 * tokens nor too deep a nesting, so short ones are not counted at all.
 */
export function parserLimitError(query: string, maxTokens: number): GraphQLError | undefined {
  if (query.length <= Math.min(maxTokens, MAX_NESTING)) return undefined
  const lexer = new Lexer(new Source(query))
  let count = 0
  let depth = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      // The lexer links each token to the one before: unlinked, the ones read can be collected.
      ;(token as { prev: unknown }).prev = null
      if (++count > maxTokens) return new GraphQLError(`Syntax Error: Document contains more than ${maxTokens} tokens. Parsing aborted.`)
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.PAREN_L || token.kind === TokenKind.BRACKET_L) {
        if (++depth > MAX_NESTING) return new GraphQLError(`Syntax Error: Document nests brackets more than ${MAX_NESTING} deep. Parsing aborted.`)
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.PAREN_R || token.kind === TokenKind.BRACKET_R) {
        depth--
      }
    }
  } catch {
    return undefined
  }
  return undefined
}
