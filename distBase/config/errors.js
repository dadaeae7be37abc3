// The start-up error for a bad homeserver.yaml: it names the option and what is wrong with it.
export class ConfigError extends Error {
    constructor(option, problem) {
        super(`config option '${option}': ${problem}`);
        this.name = "ConfigError";
    }
}
