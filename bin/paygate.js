#!/usr/bin/env node
// Paygate runs its TypeScript sources directly through Node's type stripping (Node >= 22.18 / 24).
import '../src/cli/main.ts';
