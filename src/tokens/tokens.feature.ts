// The tokens feature: bearer tokens — sign in for one, revoke it. It gives the transports the
// Authenticate and CurrentCallers functions (src/core/caller.ts) through the composition root.
import type { Feature } from '../feature.js'
import { tokensRoutes } from './tokens.routes.js'
import { createTokensService, type TokensService } from './tokens.service.js'
import { tokensData } from './tokens.data.js'

export const tokensFeature = {
  name: 'tokens',
  createService: createTokensService,
  routes: tokensRoutes,
  apiIndex: {
    tokens_url: { path: '/tokens' },
    current_token_url: { path: '/tokens/current' },
  },
  data: tokensData,
} satisfies Feature<{ tokens: TokensService }>
