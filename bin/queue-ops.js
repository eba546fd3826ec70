#!/usr/bin/env node
// A plain-JS shim so `npx queue-ops …` runs the TypeScript entry without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/transports/cli/main.ts');
