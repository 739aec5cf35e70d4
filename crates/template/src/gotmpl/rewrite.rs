//! Passes over the parsed template: what Ollama does to the tree, and the hooks that
//! make printing Go-exact and rendering bounded.
//!
//! Ollama reads and edits the parse tree itself: it lists the identifiers to decide
//! between the `.Messages` and the per-turn path ([`identifiers`]), appends
//! `{{ .Response }}` to templates that never mention it ([`append_response`]), and for
//! the last turn of the per-turn path cuts everything after `.Response`
//! ([`cut_after_response`], a port of its `deleteNode`). Go also refuses, at parse time,
//! a template that calls a function nobody defined ([`undefined_function`]).
//!
//! [`instrument`] then adds calls that a template author cannot write (their names hold
//! a space, which no identifier can): every printed value passes through the print hook
//! (Go's `fmt` and Ollama's `String()` methods), values given to `printf`/`html`/… pass
//! through the format hook, every function result passes the guard (fuel and size), and
//! every list of nodes starts with a tick that spends fuel for its length, so loops and
//! recursion run out of fuel instead of running forever.

use gotmpl::parse::{
    ActionNode, BranchNode, CommandNode, DefineNode, Expr, ListNode, Node, Number, PipeNode, Pos,
    SmolStr,
};
use std::collections::BTreeSet;

use super::hooks;

/// Ollama's `Template.Vars`: every field and variable name in the template and its
/// definitions, lower-cased.
pub fn identifiers(root: &ListNode, defines: &[DefineNode]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for list in std::iter::once(root).chain(defines.iter().map(|d| &d.body)) {
        list_identifiers(list, &mut names);
    }
    names
}

fn list_identifiers(list: &ListNode, names: &mut BTreeSet<String>) {
    for node in &list.nodes {
        match node {
            Node::List(list) => list_identifiers(list, names),
            Node::Action(action) => pipe_identifiers(&action.pipe, names),
            Node::Template(template) => {
                if let Some(pipe) = &template.pipe {
                    pipe_identifiers(pipe, names);
                }
            }
            Node::If(branch) | Node::Range(branch) | Node::With(branch) => {
                pipe_identifiers(&branch.pipe, names);
                list_identifiers(&branch.body, names);
                if let Some(other) = &branch.else_body {
                    list_identifiers(other, names);
                }
            }
            Node::Text(_) | Node::Define(_) | Node::Break(_) | Node::Continue(_) => {}
        }
    }
}

fn pipe_identifiers(pipe: &PipeNode, names: &mut BTreeSet<String>) {
    for arg in pipe.commands.iter().flat_map(|command| &command.args) {
        match arg {
            Expr::Field(_, fields) => names.extend(fields.iter().map(|f| f.to_lowercase())),
            Expr::Variable(_, name, fields) => {
                names.insert(name.to_lowercase());
                names.extend(fields.iter().map(|f| f.to_lowercase()));
            }
            Expr::Pipe(_, inner) => pipe_identifiers(inner, names),
            // Ollama's walk stops at chains and literals.
            _ => {}
        }
    }
}

/// The first function the template calls that `known` does not define, with where.
pub fn undefined_function(
    root: &ListNode,
    defines: &[DefineNode],
    known: &dyn Fn(&str) -> bool,
) -> Option<(SmolStr, Pos)> {
    let mut found = None;
    let mut check = |expr: &Expr| {
        if let Expr::Identifier(pos, name) = expr {
            if found.is_none() && !known(name) {
                found = Some((name.clone(), *pos));
            }
        }
    };
    for list in std::iter::once(root).chain(defines.iter().map(|d| &d.body)) {
        visit_list_exprs(list, &mut check);
    }
    found
}

fn visit_list_exprs(list: &ListNode, visit: &mut dyn FnMut(&Expr)) {
    for node in &list.nodes {
        match node {
            Node::List(list) => visit_list_exprs(list, visit),
            Node::Action(action) => visit_pipe_exprs(&action.pipe, visit),
            Node::Template(template) => {
                if let Some(pipe) = &template.pipe {
                    visit_pipe_exprs(pipe, visit);
                }
            }
            Node::If(branch) | Node::Range(branch) | Node::With(branch) => {
                visit_pipe_exprs(&branch.pipe, visit);
                visit_list_exprs(&branch.body, visit);
                if let Some(other) = &branch.else_body {
                    visit_list_exprs(other, visit);
                }
            }
            Node::Define(define) => visit_list_exprs(&define.body, visit),
            Node::Text(_) | Node::Break(_) | Node::Continue(_) => {}
        }
    }
}

fn visit_pipe_exprs(pipe: &PipeNode, visit: &mut dyn FnMut(&Expr)) {
    for arg in pipe.commands.iter().flat_map(|command| &command.args) {
        visit_expr(arg, visit);
    }
}

fn visit_expr(expr: &Expr, visit: &mut dyn FnMut(&Expr)) {
    visit(expr);
    match expr {
        Expr::Pipe(_, pipe) => visit_pipe_exprs(pipe, visit),
        Expr::Chain(_, inner, _) => visit_expr(inner, visit),
        _ => {}
    }
}

/// Appends `{{ .Response }}`, as Ollama does to templates that name neither
/// `.Messages` nor `.Response`.
pub fn append_response(root: &mut ListNode) {
    let pos = root.pos;
    let response = Expr::Field(pos, vec![SmolStr::new("Response")]);
    root.nodes.push(Node::Action(ActionNode {
        pos,
        pipe: pipe_of(pos, vec![command(pos, vec![response])]),
    }));
}

/// The template Ollama renders for the last turn of the per-turn path: the tree up to
/// and including the first `.Response`, with everything after it deleted.
///
/// Ollama's `deleteNode` panics when the cut falls inside an `if`/`range`/`with` that
/// has an `else`; such a template cannot render per turn there, and is an error here.
pub fn cut_after_response(root: &ListNode) -> Result<ListNode, String> {
    let mut cutter = Cutter { cut: false };
    let kept = cutter.list(root)?;
    Ok(kept.unwrap_or(ListNode {
        pos: root.pos,
        nodes: Vec::new(),
    }))
}

/// Ollama's `deleteNode` with its predicate: a `.Response` field sets `cut` (and is
/// kept); once set, every node visited after it is deleted. Like Ollama, it does not
/// look into branch conditions, template calls or chained expressions.
struct Cutter {
    cut: bool,
}

type Kept<T> = Result<Option<T>, String>;

impl Cutter {
    fn list(&mut self, list: &ListNode) -> Kept<ListNode> {
        if self.cut {
            return Ok(None);
        }
        let mut nodes = Vec::with_capacity(list.nodes.len());
        for node in &list.nodes {
            if let Some(node) = self.node(node)? {
                nodes.push(node);
            }
        }
        Ok(Some(ListNode {
            pos: list.pos,
            nodes,
        }))
    }

    fn node(&mut self, node: &Node) -> Kept<Node> {
        if self.cut {
            return Ok(None);
        }
        Ok(match node {
            Node::List(list) => self.list(list)?.map(Node::List),
            Node::Action(action) => self.pipe(&action.pipe).map(|pipe| {
                Node::Action(ActionNode {
                    pos: action.pos,
                    pipe,
                })
            }),
            Node::If(branch) => Some(Node::If(self.branch(branch)?)),
            Node::Range(branch) => Some(Node::Range(self.branch(branch)?)),
            Node::With(branch) => Some(Node::With(self.branch(branch)?)),
            other => Some(other.clone()),
        })
    }

    fn branch(&mut self, branch: &BranchNode) -> Result<BranchNode, String> {
        let body = self
            .list(&branch.body)?
            .unwrap_or_else(|| branch.body.clone());
        let else_body = match &branch.else_body {
            Some(_) if self.cut => {
                return Err(
                    "the template's {{ .Response }} sits in a branch with an else, which \
                     Ollama's per-turn rendering cannot cut (it fails on this template)"
                        .into(),
                )
            }
            Some(other) => self.list(other)?,
            None => None,
        };
        Ok(BranchNode {
            pos: branch.pos,
            pipe: branch.pipe.clone(),
            body,
            else_body,
        })
    }

    fn pipe(&mut self, pipe: &PipeNode) -> Option<PipeNode> {
        if self.cut {
            return None;
        }
        let mut commands = Vec::with_capacity(pipe.commands.len());
        for command in &pipe.commands {
            let args: Vec<Expr> = command.args.iter().filter_map(|a| self.expr(a)).collect();
            if args.is_empty() {
                return None;
            }
            commands.push(CommandNode {
                pos: command.pos,
                args,
            });
        }
        Some(PipeNode {
            commands,
            ..pipe.clone()
        })
    }

    fn expr(&mut self, expr: &Expr) -> Option<Expr> {
        if let Expr::Field(_, fields) = expr {
            if fields.iter().any(|field| field == "Response") {
                self.cut = true;
                return Some(expr.clone());
            }
        }
        if self.cut {
            return None;
        }
        match expr {
            Expr::Pipe(pos, pipe) => self.pipe(pipe).map(|pipe| Expr::Pipe(*pos, pipe)),
            other => Some(other.clone()),
        }
    }
}

/// Adds the print, format, guard and tick hooks to `list` and everything in it.
pub fn instrument(list: &mut ListNode) {
    for node in &mut list.nodes {
        instrument_node(node);
    }
    let pos = list.pos;
    let cost = Expr::Number(pos, Number::Int(list.nodes.len() as i64 + 1));
    let tick = command(
        pos,
        vec![Expr::Identifier(pos, SmolStr::new(hooks::TICK)), cost],
    );
    list.nodes.insert(
        0,
        Node::Action(ActionNode {
            pos,
            pipe: pipe_of(pos, vec![tick]),
        }),
    );
}

fn instrument_node(node: &mut Node) {
    match node {
        Node::Action(action) => {
            instrument_pipe(&mut action.pipe);
            if action.pipe.decl.is_empty() {
                let pos = action.pos;
                action.pipe.commands.push(call(pos, hooks::PRINT));
            }
        }
        Node::If(branch) | Node::Range(branch) | Node::With(branch) => {
            instrument_pipe(&mut branch.pipe);
            instrument(&mut branch.body);
            if let Some(other) = &mut branch.else_body {
                instrument(other);
            }
        }
        Node::Template(template) => {
            if let Some(pipe) = &mut template.pipe {
                instrument_pipe(pipe);
            }
        }
        Node::List(list) => instrument(list),
        Node::Define(define) => instrument(&mut define.body),
        Node::Text(_) | Node::Break(_) | Node::Continue(_) => {}
    }
}

fn instrument_pipe(pipe: &mut PipeNode) {
    let commands = std::mem::take(&mut pipe.commands);
    for mut command in commands {
        for arg in &mut command.args {
            instrument_expr(arg);
        }
        let function = called_function(&command).map(SmolStr::from);
        let hooks = function
            .as_deref()
            .and_then(|f| argument_hooks(f, &command.args[1..]));
        for (arg, hook) in command
            .args
            .iter_mut()
            .skip(1)
            .zip(hooks.unwrap_or_default())
        {
            format_with_go_methods(arg, hook);
        }
        let pos = command.pos;
        pipe.commands.push(command);
        if function.is_some() {
            pipe.commands.push(call(pos, hooks::GUARD));
        }
    }
}

fn instrument_expr(expr: &mut Expr) {
    match expr {
        Expr::Pipe(_, pipe) => instrument_pipe(pipe),
        Expr::Chain(_, inner, _) => instrument_expr(inner),
        _ => {}
    }
}

/// The function a command calls, if its first word names one.
fn called_function(command: &CommandNode) -> Option<&str> {
    match command.args.first()? {
        Expr::Identifier(_, name) => Some(name),
        Expr::Chain(_, inner, _) => match inner.as_ref() {
            Expr::Identifier(_, name) => Some(name),
            _ => None,
        },
        _ => None,
    }
}

/// The format hook for each argument of a builtin that prints with Go's `fmt`
/// (`print` and `println` are replaced by Go-exact ones, see [`super::hooks`]): `html`,
/// `js` and `urlquery` print every argument as `%v`; `printf` as its format says when
/// the format is a literal without `*` or `[n]`, else only Go types are converted.
fn argument_hooks(function: &str, args: &[Expr]) -> Option<Vec<&'static str>> {
    match function {
        "html" | "js" | "urlquery" => Some(vec![hooks::FORMAT_VALUE; args.len()]),
        "printf" => {
            let verbs = match args.first() {
                Some(Expr::String(_, format)) => printf_verbs(format),
                _ => None,
            };
            let hook = |i: usize| match &verbs {
                Some(verbs) if i > 0 && verbs.get(i - 1) == Some(&'v') => hooks::FORMAT_VALUE,
                _ => hooks::FORMAT,
            };
            Some((0..args.len()).map(hook).collect())
        }
        _ => None,
    }
}

/// The verb of each argument a `printf` format consumes, or `None` when widths or
/// indexes come from arguments (`*`, `[n]`).
fn printf_verbs(format: &str) -> Option<Vec<char>> {
    let mut verbs = Vec::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        while let Some(&next) = chars.peek() {
            match next {
                '+' | '-' | '#' | ' ' | '.' | '0'..='9' => {
                    chars.next();
                }
                '*' | '[' => return None,
                _ => break,
            }
        }
        match chars.next() {
            Some('%') | None => {}
            Some(verb) => verbs.push(verb),
        }
    }
    Some(verbs)
}

/// Routes an argument of a formatting builtin through a format hook, so that a Go type
/// (and for `%v` a float) prints as `fmt` prints it. Literals stay as they are.
fn format_with_go_methods(arg: &mut Expr, hook: &str) {
    let pos = arg.pos();
    match arg {
        Expr::Pipe(_, pipe) => pipe.commands.push(call(pos, hook)),
        Expr::Dot(_) | Expr::Field(..) | Expr::Variable(..) | Expr::Chain(..) => {
            let inner = std::mem::replace(arg, Expr::Nil(pos));
            *arg = Expr::Pipe(
                pos,
                pipe_of(pos, vec![command(pos, vec![inner]), call(pos, hook)]),
            );
        }
        _ => {}
    }
}

fn call(pos: Pos, function: &str) -> CommandNode {
    command(pos, vec![Expr::Identifier(pos, SmolStr::new(function))])
}

fn command(pos: Pos, args: Vec<Expr>) -> CommandNode {
    CommandNode { pos, args }
}

fn pipe_of(pos: Pos, commands: Vec<CommandNode>) -> PipeNode {
    PipeNode {
        pos,
        decl: Vec::new(),
        commands,
        is_assign: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gotmpl::parse::Parser;

    fn parse(source: &str) -> (ListNode, Vec<DefineNode>) {
        Parser::new(source, "{{", "}}").unwrap().parse().unwrap()
    }

    #[test]
    fn identifiers_are_fields_and_variables_lower_cased() {
        let (root, defines) = parse(
            r#"{{ range $.Messages }}{{ .Role }}{{ end }}{{ define "x" }}{{ .Prompt }}{{ end }}"#,
        );
        let names = identifiers(&root, &defines);
        assert!(names.contains("messages") && names.contains("role") && names.contains("prompt"));
    }

    #[test]
    fn the_cut_keeps_the_response_and_drops_what_follows() {
        let (root, _) = parse("a{{ .Prompt }}b{{ .Response }}c{{ .System }}");
        let cut = cut_after_response(&root).unwrap();
        assert_eq!(cut.nodes.len(), 4);
    }

    #[test]
    fn printf_verbs_are_read_from_literal_formats() {
        assert_eq!(printf_verbs("%s=%-8v %%%.2f"), Some(vec!['s', 'v', 'f']));
        assert_eq!(printf_verbs("a%*s"), None);
    }

    #[test]
    fn a_cut_inside_a_branch_with_an_else_is_an_error() {
        let (root, _) = parse("{{ if .X }}{{ .Response }}{{ else }}no{{ end }}");
        assert!(cut_after_response(&root).is_err());
    }
}
