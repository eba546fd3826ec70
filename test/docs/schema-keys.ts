/**
 * Every key path of the config schema (`slack.incidentChannel`, `systems[].workers.<group>.min`),
 * read from zod's own definitions, so the documentation can be checked against what the loader
 * accepts rather than against a list someone keeps by hand.
 */
interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  innerType?: { _zod: { def: Def } };
  element?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
  options?: { _zod: { def: Def } }[];
  in?: { _zod: { def: Def } };
}

export function schemaKeyPaths(schema: { _zod: { def: unknown } }): string[] {
  const paths = new Set<string>();
  const walk = (def: Def, prefix: string) => {
    switch (def.type) {
      case 'object':
        for (const [key, value] of Object.entries(def.shape ?? {})) {
          const path = prefix ? `${prefix}.${key}` : key;
          paths.add(path);
          walk(value._zod.def, path);
        }
        return;
      case 'default':
      case 'prefault':
      case 'optional':
      case 'nullable':
        return walk(def.innerType!._zod.def, prefix);
      case 'pipe':
        return walk(def.in!._zod.def, prefix);
      case 'array':
        return walk(def.element!._zod.def, `${prefix}[]`);
      case 'record':
        return walk(def.valueType!._zod.def, `${prefix}.<name>`);
      case 'union':
        for (const option of def.options ?? []) walk(option._zod.def, prefix);
        return;
      default:
        return;
    }
  };
  walk(schema._zod.def as Def, '');
  return [...paths].sort();
}
