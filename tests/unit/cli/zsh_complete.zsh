# zsh -f zsh_complete.zsh SCRIPT CAPTURE 'rocprof run --sampling-mode '
# Types the line and a TAB into an interactive zsh (a pseudo-terminal: zsh/zpty) whose
# completion system has SCRIPT sourced; every candidate the completion offers is appended to
# CAPTURE, one a line, and the shell exits after that one completion. A SCRIPT named _rocprof
# is autoloaded from its folder on $fpath, as installed; any other is sourced after compinit.
zmodload zsh/zpty || exit 3
script=$1 capture=$2 line=$3
setup=${capture}.setup.zsh
if [[ ${script:t} == _rocprof ]]; then
    load="fpath=(${(q)script:h} \$fpath); autoload -U compinit && compinit -u -D"
else
    load="autoload -U compinit && compinit -u -D; source ${(q)script}"
fi
cat > $setup <<SETUP
PROMPT=
$load
bindkey '^I' complete-word
comppostfuncs=(exit)
compadd() {
    # calls that only fetch or check matches (-O -A -D) are the completion system's own
    if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "\$@"; return; fi
    local -a hits
    builtin compadd -A hits "\$@"
    (( \$#hits )) && print -rl -- \$hits >> ${(q)capture}
    builtin compadd "\$@"
}
print -r -- READY
SETUP
: > $capture
zpty z zsh -f -i
zpty -w z "source ${(q)setup}"
zpty -r z out '*READY*' || exit 4
zpty -w -n z "$line"$'\t'
while zpty -r z out; do :; done
zpty -d z
