// What loadConfig refuses in an environment: its problems, or none when it loads.
import { ConfigError, loadConfig } from '../../src/config.ts';

export function configProblems(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
}
