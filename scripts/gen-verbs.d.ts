/** The files scripts/gen-verbs.js writes, relative to the repository's root. */
export declare const GENERATED_FILES: readonly string[];
/** The generated files' text, by path relative to `root`, from src/commands/*.ts as they are. */
export declare function generateVerbs(root: string): Record<string, string>;
/** The generated files whose text on disk is not what src/commands/*.ts gives now. */
export declare function staleVerbFiles(root: string): string[];
/** Writes the generated files that changed; answers their paths. */
export declare function writeVerbFiles(root: string): string[];
