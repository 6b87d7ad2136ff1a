export function registeredFeatures(root?: string): string[]
export function featureFolders(root?: string): string[]
export function sharedLayers(root?: string): string[]
export const COMPOSITION: readonly string[]
