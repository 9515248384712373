/*
 * The statements of delta-lifecycle, and nothing else: every other statement is handed to
 * the parser this one wraps (Delta's, then Spark's).
 */
grammar DeltaLifecycleSqlBase;

// Keywords are written upper-case; the lexer reads the text through UpperCaseCharStream, so they
// match in any case (ANTLR's caseInsensitive option needs 4.10; Spark 3.5 ships 4.9.3).

singleStatement
    : statement SEMICOLON* EOF
    ;

statement
    : DESCRIBE PROTOCOL HISTORY table=tableName                     #describeProtocolHistory
    | DESCRIBE COMPATIBILITY table=tableName
        (VERSION AS OF version=INTEGER_VALUE)? (FOR client=STRING)?        #describeCompatibility
    | ALTER TABLE table=tableName COMPACT LOG
        (FROM VERSION fromVersion=INTEGER_VALUE TO VERSION toVersion=INTEGER_VALUE)?   #compactLog
    | ALTER TABLE table=tableName CLEAN LOG
        (RETAIN retainHours=INTEGER_VALUE HOURS)? (DRY RUN)?               #cleanLog
    | ALTER TABLE table=tableName DROP FEATURE feature=featureName
        (TRUNCATE HISTORY)? (DRY RUN)?                                     #dropFeature
    | ALTER TABLE table=tableName DROP FEATURES FOR CLIENT client=STRING
        (FOR WRITES)? (TRUNCATE HISTORY)? (DRY RUN)?                       #dropFeaturesForClient
    | ALTER TABLE table=tableName SET REDIRECT kind=redirectMode?
        TO (location=STRING | TABLE target=tableName (LOCATION targetLocation=STRING)?)
        (NO REDIRECT RULES
            LEFT_PAREN rules+=redirectRule (COMMA rules+=redirectRule)* RIGHT_PAREN)?
        (DRY RUN)?                                                         #setRedirect
    | ALTER TABLE table=tableName UNSET REDIRECT (DRY RUN)?                #unsetRedirect
    | DESCRIBE REDIRECT table=tableName                                    #describeRedirect
    | DESCRIBE LOG FILES table=tableName                                   #describeLogFiles
    | ALTER TABLE table=tableName CHECKPOINT (DRY RUN)?                    #checkpoint
    ;

redirectMode
    : READER WRITER
    | WRITER ONLY
    ;

// 'app' ALLOW (INSERT, DELETE): sessions of that application run those operations on the source.
redirectRule
    : app=STRING ALLOW
        LEFT_PAREN (operations+=identifier (COMMA operations+=identifier)*)? RIGHT_PAREN
    ;

// Feature names may contain '-' (typeWidening-preview); a quoted string works too.
featureName
    : identifier (MINUS identifier)*
    | STRING
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
    : DESCRIBE | PROTOCOL | HISTORY | ALTER | TABLE | COMPACT | CLEAN | LOG | FROM | TO | VERSION
    | RETAIN | HOURS | DRY | RUN | DROP | FEATURE | TRUNCATE
    | SET | UNSET | REDIRECT | READER | WRITER | ONLY | NO | RULES | ALLOW
    | COMPATIBILITY | AS | OF | FOR | FEATURES | CLIENT | WRITES | FILES | LOCATION | CHECKPOINT
    ;

DESCRIBE: 'DESCRIBE' | 'DESC';
PROTOCOL: 'PROTOCOL';
HISTORY: 'HISTORY';
ALTER: 'ALTER';
TABLE: 'TABLE';
COMPACT: 'COMPACT';
CLEAN: 'CLEAN';
LOG: 'LOG';
FROM: 'FROM';
TO: 'TO';
VERSION: 'VERSION';
RETAIN: 'RETAIN';
HOURS: 'HOURS';
DRY: 'DRY';
RUN: 'RUN';
DROP: 'DROP';
FEATURE: 'FEATURE';
TRUNCATE: 'TRUNCATE';
SET: 'SET';
UNSET: 'UNSET';
REDIRECT: 'REDIRECT';
READER: 'READER';
WRITER: 'WRITER';
ONLY: 'ONLY';
NO: 'NO';
RULES: 'RULES';
ALLOW: 'ALLOW';
COMPATIBILITY: 'COMPATIBILITY';
AS: 'AS';
OF: 'OF';
FOR: 'FOR';
FEATURES: 'FEATURES';
CLIENT: 'CLIENT';
WRITES: 'WRITES';
FILES: 'FILES';
LOCATION: 'LOCATION';
CHECKPOINT: 'CHECKPOINT';

DOT: '.';
SEMICOLON: ';';
MINUS: '-';
COMMA: ',';
LEFT_PAREN: '(';
RIGHT_PAREN: ')';
STRING: '\'' (~['\\] | '\\' .)* '\'' | '"' (~["\\] | '\\' .)* '"';

// Before IDENTIFIER: a run of digits is a number, not a name.
INTEGER_VALUE: [0-9]+;
IDENTIFIER: [A-Z0-9_]+;
BACKQUOTED_IDENTIFIER: '`' (~'`' | '``')* '`';

SIMPLE_COMMENT: '--' ~[\r\n]* -> channel(HIDDEN);
BRACKETED_COMMENT: '/*' .*? '*/' -> channel(HIDDEN);
WS: [ \t\r\n]+ -> channel(HIDDEN);

// Any other character: lexing never fails, so any statement can be inspected and delegated.
UNRECOGNIZED: .;
