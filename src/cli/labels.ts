// asset-tracker labels rotate: a new secret for the links printed on asset labels.
import { rotateLabelSecret } from '../admin/labels.ts';
import { type Command, output } from './command.ts';
import { withDatabase } from './database.ts';

export const labelsRotate: Command = {
  words: ['labels', 'rotate'],
  usage: 'labels rotate [--json]',
  summary: 'Replaces the secret that signs the status links of printed asset labels (/s/…). Every label printed before\n'
    + 'then opens a missing page (404), on every instance at once; print the labels again for new links.',
  async run(args) {
    const at = await withDatabase((d) => rotateLabelSecret(d));
    output(args, `replaced the labels' secret at ${at} UTC; every label printed before now answers 404`, { rotated: at });
  },
};
