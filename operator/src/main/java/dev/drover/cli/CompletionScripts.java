package dev.drover.cli;

/**
 * {@code kubectl drover completion bash|zsh|fish}: a script that completes the {@code kubectl-drover} command typed
 * as itself, by asking {@code kubectl-drover __complete} ({@link Completion}) at each TAB. {@code kubectl drover}
 * (through kubectl) needs none of them: kubectl 1.26+ asks the {@code kubectl_complete-drover} executable on PATH.
 */
final class CompletionScripts {

    private CompletionScripts() {}

    /** The script for {@code shell}, one of {@link PluginCommandLine#SHELLS}. */
    static String of(String shell) {
        return switch (shell) {
            case "bash" -> BASH;
            case "zsh" -> ZSH;
            default -> FISH;
        };
    }

    private static final String BASH = """
            # bash completion for kubectl-drover: source <(kubectl drover completion bash)
            # (kubectl drover, through kubectl 1.26+, completes with kubectl_complete-drover on PATH instead)
            _kubectl_drover() {
                local cur=${COMP_WORDS[COMP_CWORD]} out directive
                out=$(kubectl-drover __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return 0
                directive=${out##*:}
                out=$(printf '%s\\n' "$out" | sed -e '$d' -e 's/\\t.*//')
                local IFS=$'\\n'
                COMPREPLY=($(compgen -W "$out" -- "$cur"))
                if [ "${#COMPREPLY[@]}" -eq 0 ] && [ "$directive" = 0 ]; then
                    COMPREPLY=($(compgen -f -- "$cur"))
                fi
            }
            complete -o default -F _kubectl_drover kubectl-drover
            """;

    private static final String ZSH = """
            #compdef kubectl-drover
            # zsh completion for kubectl-drover: source <(kubectl drover completion zsh)
            # (kubectl drover, through kubectl 1.26+, completes with kubectl_complete-drover on PATH instead)
            _kubectl_drover() {
                local -a lines comps
                local directive line
                lines=("${(@f)$(kubectl-drover __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
                directive=${lines[-1]#:}
                for line in "${(@)lines[1,-2]}"; do
                    if [[ $line == *$'\\t'* ]]; then
                        comps+=("${${line%%$'\\t'*}//:/\\\\:}:${line#*$'\\t'}")
                    else
                        comps+=("${line//:/\\\\:}")
                    fi
                done
                if (( ${#comps} )); then
                    _describe 'kubectl-drover' comps
                elif [[ $directive == 0 ]]; then
                    _files
                fi
            }
            compdef _kubectl_drover kubectl-drover
            """;

    private static final String FISH = """
            # fish completion for kubectl-drover: kubectl drover completion fish | source
            # (kubectl drover, through kubectl 1.26+, completes with kubectl_complete-drover on PATH instead)
            function __kubectl_drover_complete
                set -l words (commandline -opc)
                kubectl-drover __complete $words[2..-1] (commandline -ct) 2>/dev/null | string match -v -r '^:[0-9]+$'
            end
            complete -c kubectl-drover -f -a '(__kubectl_drover_complete)'
            """;
}
