// `paygate user create|reset-password|disable|enable`: the operator's hand on the
// cabinet's people. Each is audited as the operator's in every merchant the user
// belongs to; a new password, a reset link and disabling each end the user's sessions.
import { parseArgs } from 'node:util';
import { operatorResetLink } from '../cabinet/password-reset/password-reset-service.ts';
import { isRole, ROLES } from '../cabinet/roles.ts';
import { createUserByOperator, setPassword, setUserDisabled } from '../cabinet/users/user-service.ts';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

export const userCreateCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        password: { type: 'string' },
        merchant: { type: 'string' },
        role: { type: 'string' },
      },
    });
    const email = required(values.email, '--email');
    if ((values.merchant === undefined) !== (values.role === undefined))
      throw new CliUsageError('--merchant and --role go together');
    if (values.role !== undefined && !isRole(values.role))
      throw new CliUsageError(`--role must be one of ${ROLES.join(', ')}`);
    const user = await withCliContext(config, async (context) => {
      const created = await createUserByOperator(context, {
        email,
        name: values.name,
        password: values.password,
        ...(values.merchant !== undefined && isRole(values.role)
          ? { merchantId: values.merchant, role: values.role }
          : {}),
      });
      // Without a password the person sets one through a reset link.
      const link = values.password === undefined ? await operatorResetLink(context, created.email) : undefined;
      return { created, link };
    });
    io.out(
      `user ${user.created.id} (${user.created.email})${values.merchant ? `, ${values.role} of ${values.merchant}` : ''}`,
    );
    if (user.link) io.out(`set-password link (works once within 1 hour): ${user.link}`);
    return 0;
  },
};

export const userResetPasswordCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' } } });
    const email = required(values.email, '--email');
    const password = values.password;
    if (password !== undefined) {
      await withCliContext(config, (context) => setPassword(context, email, password));
      io.out(`password set for ${email}; every session of theirs has ended`);
      return 0;
    }
    const link = await withCliContext(config, (context) => operatorResetLink(context, email));
    io.out(`reset link for ${email} (works once within 1 hour; every session of theirs has ended): ${link}`);
    return 0;
  },
};

function disabledCommand(disabled: boolean): CliCommand {
  return {
    async run(args, io, config) {
      const { values } = parseArgs({ args, options: { email: { type: 'string' } } });
      const email = required(values.email, '--email');
      await withCliContext(config, (context) => setUserDisabled(context, email, disabled));
      io.out(disabled ? `disabled ${email}; every session of theirs has ended` : `enabled ${email}`);
      return 0;
    },
  };
}

export const userDisableCommand = disabledCommand(true);
export const userEnableCommand = disabledCommand(false);
