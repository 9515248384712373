/*
 * The statements of delta-lifecycle, and nothing else: every other statement is handed to
 * the parser this one wraps (Delta's, then Spark's).
 */
grammar DeltaLifecycleSqlBase;

options { caseInsensitive = true; }

singleStatement
    : statement SEMICOLON* EOF
    ;

statement
    : DESCRIBE PROTOCOL HISTORY table=tableName                     #describeProtocolHistory
    ;

// A catalog name (t, db.t, catalog.db.t) or a path table: delta.`/path/to/table`.
tableName
    : parts+=identifier (DOT parts+=identifier)*
    ;

identifier
    : IDENTIFIER
    | BACKQUOTED_IDENTIFIER
    | nonReserved
    ;

nonReserved
    : DESCRIBE | PROTOCOL | HISTORY
    ;

DESCRIBE: 'DESCRIBE' | 'DESC';
PROTOCOL: 'PROTOCOL';
HISTORY: 'HISTORY';

DOT: '.';
SEMICOLON: ';';

IDENTIFIER: [A-Z0-9_]+;
BACKQUOTED_IDENTIFIER: '`' (~'`' | '``')* '`';

SIMPLE_COMMENT: '--' ~[\r\n]* -> channel(HIDDEN);
BRACKETED_COMMENT: '/*' .*? '*/' -> channel(HIDDEN);
WS: [ \t\r\n]+ -> channel(HIDDEN);

// Any other character: lexing never fails, so any statement can be inspected and delegated.
UNRECOGNIZED: .;
