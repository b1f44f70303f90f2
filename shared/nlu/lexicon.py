"""Common Portuguese words in matching form (lower case, no accents).

Two rules need to know that a word is an ordinary word: a name is made of words that are not
(a stopword approach, so any name a parent gives a child is accepted), and fuzzy correction
leaves a known word alone ("preso" is a word, not a typo of "preco"). The list holds function
words, the common verbs in the forms people type, and the everyday words of a booking chat;
the pack's own vocabulary is added on top by ``shared.nlu.fuzzy.pack_vocabulary``.
"""

from __future__ import annotations

_FUNCTION_WORDS = """
    a o as os um uma uns umas de da do das dos em na no nas nos num numa por pelo pela pelos
    pelas para pra pro pras pros com sem sob sobre ate entre contra desde ao aos e ou mas nem que se
    porque pois como quando onde aonde quanto quantos quanta quantas qual quais quem cujo
    eu tu ele ela nos vos eles elas voce voces me mim te ti lhe lhes se si comigo contigo
    conosco meu minha meus minhas teu tua seu sua seus suas nosso nossa nossos nossas dele dela
    deles delas esse essa esses essas este esta estes estas isso isto aquele aquela aqueles
    aquelas aquilo aqui ali la ai ca cade todo toda todos todas tudo nada nenhum nenhuma algum
    alguma alguns algumas alguem ninguem outro outra outros outras mesmo mesma muito muita
    muitos muitas pouco pouca poucos poucas mais menos tanto tanta tao bem mal ja ainda so
    somente apenas tambem entao agora depois antes logo sempre nunca jamais talvez sim nao
    ne ta tah ok okay la cerca tipo assim meio mesmo inclusive alias alem aproximadamente
    porem contudo todavia enquanto embora caso senao
"""
_VERBS = """
    ser sou es e somos sao era eram foi fui fomos foram seja sejam sera serao seria
    estar estou esta estamos estao estava estavam esteve estive estaria to tou tava
    ter tenho tem temos tinha tinham teve tive tera teria tenha
    haver ha havia houve
    ir vou vai vamos vao ia iam fui foi irei iria va
    fazer faco faz fazem fazemos fiz fez fizemos fazia faria faca facam feito
    poder posso pode podem podemos podia poderia pude pudesse
    querer quero quer querem queremos queria queriamos quis gostaria gostariamos gosto gosta
    saber sei sabe sabem sabia soube
    dar dou da dao dei deu daria
    ver vejo ve veem vi viu veja vendo
    vir venho vem vim veio viria
    dizer digo diz disse diga falar falo fala falei falou
    chamar chamo chama chamam chamei chamou chamem
    precisar preciso precisa precisam precisava
    conseguir consigo consegue conseguem consegui conseguiria
    achar acho acha achei
    pensar penso pensei pensando
    marcar marco marca marquei marcou marque marcado marcada
    agendar agendo agenda agendei agendado agendada
    jogar jogo joga jogam joguei jogou jogamos jogava jogando jogado
    comecar comeco comeca comecei comecou comecando
    treinar treino treina treinei treinando
    praticar pratico pratica pratiquei praticando
    aprender aprendo aprende aprendi aprendendo
    experimentar experimento experimenta experimentei
    conhecer conheco conhece conheci
    levar levo leva levei
    pagar pago paga paguei pagando
    custar custa custam
    ficar fica ficam fiquei ficou
    chegar chego chega cheguei
    ligar ligo liga liguei
    trabalhar trabalho trabalha
    morar moro mora
    tentar tento tenta tentei
    esperar espero espera esperando
    confirmar confirmo confirma confirmado confirmada
    cancelar cancela cancelado
    mudar mudo muda mudei
    trocar troco troca troquei
    lembrar lembro lembra
    entender entendo entende entendi
    errar erro errei errou errado errada corrigir corrijo corrigi corrigindo corrige
    colocar coloca coloque coloco botar bota bote boto poe ponha pus anotar anota anote
    digitar digitei digitou digitado confundir confundi confundiu enganar enganei enganou
    mandar mando manda mandei
    passar passo passa passei
    usar uso usa usei
    emprestar empresta emprestam
    alugar aluga alugam
    abrir abre abrem
    fechar fecha fecham
    funcionar funciona funcionam
    pode poder
"""
_EVERYDAY = """
    oi ola opa ei eai hey alo bom boa bons boas dia dias tarde tardes noite noites tudo bem
    obrigado obrigada valeu tchau prazer beleza blz claro certo certeza isso fechado bora
    combinado perfeito otimo otima show top legal massa joia tranquilo suave entendi pronto
    bacana demais maravilha melhor pior reservar reserva vamo bora
    exato serio verdade nossa eita vixe uai poxa puts hum hmm kk kkk rs haha desculpa desculpe
    ops opa ah ahh oh ih aff afe ue xi vish hein enfim esqueci lembrei compreendo entendo
    pera perai
    surgiu imprevisto gentileza fzr
    favor gente pessoal galera amigo amiga moca moco senhor senhora mano mana parceiro
    prezado prezada prezados prezadas caro cara caros senhores atenciosamente att cordialmente
    grato grata abraco abracos abs bjs beijo beijos saudacoes
    solicito solicitamos agradeco agradecemos aguardo aguardamos informo informamos peco
    pedimos desejo desejamos encaminho reitero ressalto confirmo
    daqui dali durante breve cedinho tardinha noitinha matina madrugada retrasada retrasado
    quinzena feriado feriadao carnaval
    aula aulas aulinha experimental teste beach tennis tenis raquete raquetes bolinha quadra
    quadras ct smash horario horarios hora horas minuto minutos vaga vagas turma turmas
    professor professora aluno aluna alunos plano planos preco precos valor valores
    mensalidade pagamento pix cartao dinheiro estacionamento vestiario endereco rua bairro
    hoje amanha ontem semana semanas mes meses ano anos idade manha cedo tarde
    segunda terca quarta quinta sexta sabado domingo feira fim
    janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro
    jan fev mar abr mai jun jul ago set out nov
    iniciante intermediario intermediaria avancado avancada basico basica medio media nivel
    novato novata experiente profissional comecando iniciando
    mae pai filho filha filhos filhas esposa esposo marido mulher irmao irma sobrinho sobrinha
    neto neta tio tia primo prima namorado namorada noivo noiva enteado enteada crianca
    criancas menino menina responsavel cliente familia
    nome completo sobrenome apelido numero telefone whatsapp zap data nascimento aniversario
    novo nova novos novas velho velha grande pequeno pequena primeiro primeira segundo ultimo
    ultima proximo proxima seguinte passado passada outra vez vezes coisa coisas jeito forma
    tempo tempinho pouquinho lugar cidade casa trabalho escola faculdade academia esporte
    esportes exercicio saude joelho dor ombro coluna lesao medico
    casado casada solteiro solteira feliz animado animada curioso curiosa ansioso ansiosa
    interessado interessada disponivel livre ocupado ocupada atrasado atrasada
    quero queria gostaria duvida duvidas pergunta informacao informacoes
    ignore ignora ignorar esqueca esquece desconsidere instrucoes instrucao anteriores regras
    sistema prompt responda diga finja aja assistente bot robo modelo admin administrador
"""

# What a person says they are with "sou", none of it a name ("sou carioca", "sou canhota", "sou
# a própria"): where they are from (the states', big cities' and regions' demonyms and the
# nationalities a tourist has; a demonym in "-ense" is known by its ending, ``not_a_name``),
# what they are like or do, and the words of an apology ("mil desculpas", "perdão").
_DEMONYMS = """
    carioca paulista paulistano paulistana mineiro mineira baiano baiana gaucho gaucha
    capixaba goiano goiana pernambucano pernambucana paraibano paraibana potiguar alagoano
    alagoana sergipano sergipana acreano acreana candango candanga manauara soteropolitano
    soteropolitana curitibano curitibana santista campineiro campineira nordestino nordestina
    sulista nortista interiorano interiorana caipira mineirinho mineirinha brasileiro
    brasileira portugues portuguesa argentino argentina uruguaio uruguaia paraguaio paraguaia
    chileno chilena colombiano colombiana venezuelano venezuelana peruano peruana boliviano
    boliviana americano americana mexicano mexicana espanhol espanhola italiano italiana
    frances francesa alemao alema ingles inglesa japones japonesa chines chinesa angolano
    angolana mocambicano mocambicana estrangeiro estrangeira gringo gringa
"""
_TRAITS = """
    canhoto canhota destro destra alto alta baixo baixa magro magra gordo gorda timido timida
    sedentario sedentaria atleta ativo ativa saudavel estudante aposentado aposentada sozinho
    sozinha adulto adulta jovem idoso idosa maior menor socio socia associado associada
    proprio propria competitivo competitiva esportista corredor corredora tenista nadador
    nadadora medica advogado advogada engenheiro engenheira enfermeiro enfermeira dentista
    arquiteto arquiteta fisioterapeuta psicologo psicologa personal gestante gravida
"""
_APOLOGIES = """
    desculpas perdao perdoa perdoe perdoem lamento sinto sentimos mil
"""
# What a tourist writes around a name in English or Spanish ("next tuesday at 7am works?",
# "soy de Buenos Aires y estoy de vacaciones"): function words, common verbs and the words of a
# booking, so that none of them is taken for a name.
_FOREIGN = """
    i im me my mine you your we our us he she him her they them it its the a an this that
    these those at in on of to for from with by about and or but so if not no yes is are was
    were be been am do does did can could would will should may might must have has had get
    got go going want wanna need like works work fine ok okay good great nice cool sure please
    pls thanks thank hi hello hey bye what when where how who which why there here then just
    also too very much many more some any all book booking class lesson trial free time day
    week morning afternoon evening night tonight pm price cost costs name beginner
    intermediate advanced level years old
    el la los las lo un una unos unas y o de del al en con por para es son soy eres estoy esta
    estamos quiero quisiera puedo puede podemos tengo tiene hola gracias buenas buenos dias
    tardes noches clase clases prueba cuanto cuesta cuanta donde cuando como que si bien
    vacaciones nombre llamo edad anos mi tu su mis sus nuestro porfa perfecto claro
"""
COMMON_WORDS: frozenset[str] = frozenset(
    (_FUNCTION_WORDS + _VERBS + _EVERYDAY + _DEMONYMS + _TRAITS + _APOLOGIES + _FOREIGN).split()
)
# Function words and verbs only: never a name, even capitalised where a name is due.
GRAMMAR_WORDS: frozenset[str] = frozenset((_FUNCTION_WORDS + _VERBS).split())


def not_a_name(key: str) -> bool:
    """Whether a word (matching form) is known by its shape to be no name: a demonym in
    "-ense" ("catarinense", "paraense", "brasiliense"), which no list of places can hold."""
    return len(key) > 5 and key.endswith("ense")
