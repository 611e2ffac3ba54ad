import { expect, it } from 'vitest';
// @ts-expect-error: the module does not exist; loading this file must fail.
import { missing } from './no-such-module.ts';

it('never runs', () => expect(missing).toBeDefined());
